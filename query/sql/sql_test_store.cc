// sql_test_store PATH: writes the stores extension_test.cc reads, as the
// collector writes them, and PATH.placed: each span of job "train" as
// "raw start|corrected start|corrected duration" where `meridian export`
// places it (JobClocks), sorted. A program of its own: the extension
// carries its own copy of Meridian's protobuf messages, which cannot be
// registered twice in one process.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "query/clocks/job_clocks.h"
#include "store/store.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

constexpr int64_t kT = 1700000000000000000;

// Job "train": ranks 0 and 1 on two nodes, each a thread with 3 steps of
// a "step" span, a compute span and an 8-byte MPI_Allreduce (step-tagged),
// then rank 0's counter; job "other": one span.
bool WriteJobs(const std::string& path) {
  auto store = Store::Open(path);
  if (!store.ok()) {
    fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return false;
  }
  BatchBuilder builder("agent-1");
  std::vector<v1::Batch> batches;
  for (int rank = 0; rank < 2; ++rank) {
    int p = builder.DeclareProcess(
        {"train", "node-" + std::to_string(rank), rank, 0, 100 + rank, 2});
    int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 7 + rank, "main");
    for (int step = 0; step < 3; ++step) {
      const int64_t base = kT + step * 1'000'000 + rank * 1000;
      builder.AddSpan(t, v1::CATEGORY_USER, "step", base, 900'000)
          ->set_step(step);
      builder.AddSpan(t, v1::CATEGORY_USER, "compute", base, 500'000)
          ->set_step(step);
      v1::Span* s = builder.AddSpan(t, v1::CATEGORY_MPI, "MPI_Allreduce",
                                    base + 500'000, 100'000 + rank);
      s->set_step(step);
      s->set_bytes(8);
      s->set_comm(5);
      s->set_comm_size(2);
      s->set_seq(step);
    }
    if (rank == 0) {
      v1::Span* c = builder.AddSpan(t, v1::CATEGORY_USER, "loss", kT + 5, 0);
      c->set_kind(v1::SPAN_KIND_COUNTER);
      c->set_value(0.25);
      v1::Arg* arg = c->add_args();
      arg->set_key(builder.String("unit"));
      arg->set_str(builder.String("nats \"x\""));
    }
    batches.push_back(builder.Take());  // a batch (and chunk) per rank
  }
  int q = builder.DeclareProcess({"other", "node-9", 0, 0, 999});
  int u = builder.DeclareTrack(q, v1::TRACK_KIND_THREAD, 1, "main");
  builder.AddSpan(u, v1::CATEGORY_USER, "alone", kT, 10);
  batches.push_back(builder.Take());
  std::vector<const v1::Batch*> pointers;
  for (const v1::Batch& b : batches) pointers.push_back(&b);
  auto written = (*store)->Write(pointers);
  if (!written.ok()) {
    fprintf(stderr, "%s\n", written.status().ToString().c_str());
    return false;
  }
  return true;
}

// Job "train"'s spans where JobClocks places them, into `out`.
bool WritePlaced(const std::string& path, const std::string& out) {
  StoreOptions options;
  options.read_only = true;
  auto store = Store::Open(path, options);
  if (!store.ok()) return false;
  auto catalog = (*store)->LoadCatalog("train");
  if (!catalog.ok()) return false;
  auto clocks = JobClocks::Load(**store, *catalog);
  if (!clocks.ok()) return false;
  std::vector<std::string> placed;
  absl::Status scanned =
      (*store)->Scan(catalog->job, ScanRange{}, [&](const StoredSpan& s) {
        const JobClocks::Interval shown = clocks->Place(s);
        placed.push_back(std::to_string(s.start_ns) + "|" +
                         std::to_string(shown.start_ns) + "|" +
                         std::to_string(shown.dur_ns));
        return true;
      });
  if (!scanned.ok()) return false;
  std::sort(placed.begin(), placed.end());
  std::ofstream file(out);
  for (const std::string& line : placed) file << line << "\n";
  return static_cast<bool>(file);
}

}  // namespace
}  // namespace meridian

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: sql_test_store PATH\n");
    return 2;
  }
  const std::string path = argv[1];
  if (!meridian::WriteJobs(path)) return 1;
  if (!meridian::WritePlaced(path, path + ".placed")) return 1;
  return 0;
}
