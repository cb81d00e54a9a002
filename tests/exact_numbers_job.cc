// exact_numbers_job: sends a job of random spans, counters and args whose
// values cover the whole double and int64 ranges (±0, subnormals, the
// largest and smallest, 2^53 + 1, random bit patterns) to a collector over
// its Ingest stream, and writes what it recorded, exactly, for
// exact_numbers_check.py to compare with every output (issue 25).
//
// usage: exact_numbers_job --collector HOST:PORT --job J --seed S
//                          --expect FILE
//
// Two ranks on one node, one thread each. Rank 0's batch carries span
// messages, rank 1's the same kinds of spans as column chunks (the agent's
// form): both wire encodings are checked. On each rank, per step 0..3:
// user spans (random ns times and durations, not overlapping), each with an
// int, a real and a string arg and random bytes; a counter "loss" with a
// random double after every fourth span; and on rank 0 an MPI_Send to rank 1
// (rank 1: its MPI_Recv) with extreme byte counts. The expectation file is JSON
// with every double as its 64 bits in hex ("0x...") and every int64 as a
// decimal string, so that reading it cannot round either.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/command_line.h"
#include "grpcpp/grpcpp.h"
#include "wire/batch_builder.h"
#include "wire/ingest_client.h"

namespace meridian {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kTwo53Plus1 = (int64_t{1} << 53) + 1;

uint64_t Bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

class Values {
 public:
  explicit Values(uint64_t seed) : random_(seed) {}

  // Edge cases first, in order, then random finite bit patterns (a third of
  // them subnormal or tiny).
  double Real() {
    static const double kEdges[] = {
        0.0,
        -0.0,
        std::numeric_limits<double>::denorm_min(),
        -std::numeric_limits<double>::denorm_min(),
        std::numeric_limits<double>::min(),
        std::numeric_limits<double>::max(),
        -std::numeric_limits<double>::max(),
        static_cast<double>(kTwo53Plus1),  // 2^53: the nearest double
        9007199254740994.0,
        1234567890123.0,
        0.123456789,
        0.1,
        1e300,
        -1e-300,
        static_cast<double>(kInt64Max),
        2.2250738585072009e-308,  // the largest subnormal
    };
    if (next_real_ < std::size(kEdges)) return kEdges[next_real_++];
    for (;;) {
      uint64_t bits = random_();
      if (random_() % 3 == 0) bits &= 0x800fffffffffffffULL;  // subnormal
      double v;
      std::memcpy(&v, &bits, sizeof v);
      if (std::isfinite(v)) return v;
    }
  }

  int64_t Int() {
    static const int64_t kEdges[] = {
        0,
        -1,
        1,
        kInt64Max,
        kInt64Min,
        kTwo53Plus1,
        -kTwo53Plus1,
        int64_t{1} << 53,
        kInt64Max - 1,
    };
    if (next_int_ < std::size(kEdges)) return kEdges[next_int_++];
    return static_cast<int64_t>(random_());
  }

  // Non-negative, for bytes.
  int64_t Bytes() {
    static const int64_t kEdges[] = {0, 1, kTwo53Plus1, kInt64Max};
    if (next_bytes_ < std::size(kEdges)) return kEdges[next_bytes_++];
    return static_cast<int64_t>(random_() >> (1 + random_() % 63));
  }

  int64_t Below(int64_t n) { return static_cast<int64_t>(random_() % n); }

 private:
  std::mt19937_64 random_;
  size_t next_real_ = 0;
  size_t next_int_ = 0;
  size_t next_bytes_ = 0;
};

std::string Hex(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "\"0x%016" PRIx64 "\"", Bits(v));
  return buf;
}

std::string Dec(int64_t v) { return absl::StrCat("\"", v, "\""); }

int Run(int argc, char** argv) {
  auto flags =
      CommandLine::Parse(std::vector<std::string>(argv, argv + argc), 1,
                         {"collector", "job", "expect", "seed"}, {});
  auto seed = flags.ok() ? flags->GetInt("seed", 25)
                         : absl::StatusOr<int64_t>(flags.status());
  const std::string collector = flags.ok() ? flags->Get("collector") : "";
  const std::string job = flags.ok() ? flags->Get("job") : "";
  const std::string expect_path = flags.ok() ? flags->Get("expect") : "";
  if (!seed.ok() || collector.empty() || job.empty() || expect_path.empty()) {
    fprintf(stderr,
            "usage: exact_numbers_job --collector HOST:PORT --job J --seed S "
            "--expect FILE\n");
    return 2;
  }

  std::string expect = absl::StrCat("{\"job\":\"", job, "\",\"spans\":[");
  bool first_span = true;
  std::vector<v1::Batch> batches;
  // Mid-2026, with odd nanoseconds.
  const int64_t base = int64_t{1780000000} * 1000000000 + 123456789;
  constexpr int kSteps = 4;
  constexpr int kSpansPerStep = 24;
  constexpr uint64_t kComm = 0x9e3779b97f4a7c15ULL;
  int64_t send_start[kSteps] = {};
  for (int rank = 0; rank < 2; ++rank) {
    // Each rank, and its counters, sees every edge value: rank 0 in span
    // messages, rank 1 in column chunks.
    Values values(static_cast<uint64_t>(*seed) * 2 + rank);
    Values counter_values(static_cast<uint64_t>(*seed) * 2 + rank + 1000);
    BatchBuilder builder(absl::StrCat("exact-", job, "-", rank));
    const int process = builder.DeclareProcess(
        {job, "node-0", rank, rank, 1000 + rank, /*world_size=*/2});
    const int track =
        builder.DeclareTrack(process, v1::TRACK_KIND_THREAD, 1, "main");
    int64_t t = base + values.Below(1000);
    for (int step = 0; step < kSteps; ++step) {
      for (int i = 0; i < kSpansPerStep; ++i) {
        const bool mpi = i == kSpansPerStep / 2;
        const std::string name = mpi ? (rank == 0 ? "MPI_Send" : "MPI_Recv")
                                     : absl::StrCat("op", values.Below(4));
        t += 1 + values.Below(2000000);  // a gap before it
        int64_t dur = values.Below(3000000000);
        // Causal, so that no clock correction moves an end: a receive ends
        // after its send started.
        if (mpi && rank == 0) send_start[step] = t;
        if (mpi && rank == 1 && t + dur < send_start[step]) {
          dur = send_start[step] - t + values.Below(1000);
        }
        // The MPI calls' bytes sum past int64: stats, the matrix and
        // compare show int64's largest, not a wrapped total.
        const int64_t bytes = mpi ? (step == 0   ? kTwo53Plus1
                                     : step == 1 ? kInt64Max / 4
                                                 : kInt64Max / 2 + 1)
                                  : values.Bytes();
        v1::Span* span = builder.AddSpan(
            track, mpi ? v1::CATEGORY_MPI : v1::CATEGORY_USER, name, t, dur);
        span->set_step(step);
        span->set_bytes(bytes);
        absl::StrAppend(&expect, first_span ? "" : ",\n", "{\"rank\":", rank,
                        ",\"name\":\"", name, "\",\"kind\":\"complete\"",
                        ",\"start_ns\":", Dec(t), ",\"dur_ns\":", Dec(dur),
                        ",\"step\":", step, ",\"bytes\":", Dec(bytes));
        first_span = false;
        if (mpi) {
          span->set_peer(1 - rank);
          span->set_tag(7);
          span->set_comm(kComm);
          span->set_comm_size(2);
          absl::StrAppend(&expect, ",\"args\":[]}");
        } else {
          const int64_t i_arg = values.Int();
          const double r_arg = values.Real();
          const std::string s_arg = absl::StrCat("text ", values.Int());
          v1::Arg* a = span->add_args();
          a->set_key(builder.String("i"));
          a->set_int_(i_arg);
          a = span->add_args();
          a->set_key(builder.String("r"));
          a->set_real(r_arg);
          a = span->add_args();
          a->set_key(builder.String("s"));
          a->set_str(builder.String(s_arg));
          absl::StrAppend(&expect, ",\"args\":[[\"i\",\"int\",", Dec(i_arg),
                          "],[\"r\",\"real\",", Hex(r_arg),
                          "],[\"s\",\"str\",\"", s_arg, "\"]]}");
        }
        t += dur;
        if (i % 4 != 3) continue;
        // A counter sample after every fourth span, tagged with no step.
        t += 1 + values.Below(1000000);
        const double loss = counter_values.Real();
        v1::Span* counter =
            builder.AddSpan(track, v1::CATEGORY_USER, "loss", t, 0);
        counter->set_kind(v1::SPAN_KIND_COUNTER);
        counter->set_value(loss);
        absl::StrAppend(&expect, ",\n{\"rank\":", rank,
                        ",\"name\":\"loss\",\"kind\":\"counter\","
                        "\"start_ns\":",
                        Dec(t), ",\"value\":", Hex(loss), "}");
      }
    }
    v1::Batch batch = builder.Take();
    batches.push_back(rank == 0 ? std::move(batch)
                                : ToChunks(std::move(batch)));
  }
  expect += "]}\n";

  IngestClient client(
      grpc::CreateChannel(collector, grpc::InsecureChannelCredentials()));
  auto report = client.SendAll(batches);
  if (!report.ok()) {
    fprintf(stderr, "exact_numbers_job: %s\n",
            std::string(report.status().message()).c_str());
    return 1;
  }
  if (report->stored != 2 || report->spans_invalid != 0) {
    fprintf(stderr,
            "exact_numbers_job: %lld batches stored, %lld spans invalid%s%s\n",
            static_cast<long long>(report->stored),
            static_cast<long long>(report->spans_invalid),
            report->invalid_reasons.empty() ? "" : ": ",
            report->invalid_reasons.empty()
                ? ""
                : report->invalid_reasons[0].c_str());
    return 1;
  }
  FILE* f = fopen(expect_path.c_str(), "w");
  if (f == nullptr ||
      fwrite(expect.data(), 1, expect.size(), f) != expect.size() ||
      fclose(f) != 0) {
    fprintf(stderr, "exact_numbers_job: cannot write %s\n",
            expect_path.c_str());
    return 1;
  }
  printf("sent %lld spans\n", static_cast<long long>(report->spans_stored));
  return 0;
}

}  // namespace
}  // namespace meridian

int main(int argc, char** argv) { return meridian::Run(argc, argv); }
