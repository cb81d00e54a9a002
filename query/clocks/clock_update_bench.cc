// clock_update_bench (`./bench/run.sh clocks`): what keeping a job's clock
// solution up to date costs as its batches arrive, against solving it whole.
//
// A synthetic job (--nodes nodes of 4 ranks, node n's clock 25 us x n
// ahead, about --spans spans; --layers L: SyntheticJob::layers, 6 + 2L
// spans a rank and step, of which 2 are MPI) is written to a SQLite file under
// --dir in
// --parts parts, each every node's next batches (so each part is a slice
// of the job's time). After each part, in turn (each part begins with the
// next of the three):
//   - update: JobClocks::Update with the stored solution and no kept state
//     (what the collector does for a job whose state it does not hold: after
//     a restart, an eviction, or a state over its budget): one scan of the
//     job's chunks;
//   - incremental: JobClocks::Update with the ClockSolveState kept since
//     the last part (what the collector's refresh does), then its solution
//     stored;
//   - whole: JobClocks::Load over every span (what a solve did before);
//   - logged: JobClocks::Update with a state of its own and the evidence
//     log the writer told (evidence_log.h: what the collector does now; no
//     chunk read where the log holds them).
// Each part is written to two stores in turn, alternating which goes
// first: the one the log observes, and one that no one observes (the
// writes' times compared: the log's cost to ingest).
// All must give the same solution, byte for byte (else exit 1). The last
// line is JSON: the last part's times, their ratios, how much of the
// evidence is settled, and the chunks read. Left out: the gRPC and the
// collector's writer queue (the bench stores the solution itself, on the
// same thread).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "query/clocks/clock_solve_state.h"
#include "query/clocks/evidence_log.h"
#include "query/clocks/job_clocks.h"
#include "store/store.h"
#include "testing/synthetic_job.h"

namespace meridian {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since)
      .count();
}

void Check(const absl::Status& status, const char* what) {
  if (status.ok()) return;
  fprintf(stderr, "clock_update_bench: %s: %s\n", what,
          std::string(status.message()).c_str());
  exit(1);
}

int Run(int argc, char** argv) {
  auto line =
      CommandLine::Parse(std::vector<std::string>(argv, argv + argc), 1,
                         {"spans", "dir", "parts", "nodes", "layers"}, {});
  Check(line.status(), "flags");
  auto spans = line->GetInt("spans", 2000000);
  Check(spans.status(), "--spans");
  auto parts = line->GetInt("parts", 8);
  Check(parts.status(), "--parts");
  auto nodes = line->GetInt("nodes", 16);
  Check(nodes.status(), "--nodes");
  auto layers = line->GetInt("layers", 0);  // SyntheticJob::layers
  Check(layers.status(), "--layers");
  const std::string path =
      line->Get("dir", "/tmp") + "/meridian-clock-update-bench.db";
  const std::string plain_path =
      line->Get("dir", "/tmp") + "/meridian-clock-update-bench-plain.db";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
    std::remove((plain_path + suffix).c_str());
  }
  SyntheticJob job;
  job.job = "bench";
  job.nodes = static_cast<int>(std::max<int64_t>(*nodes, 1));
  job.ranks = 4 * job.nodes;
  job.layers = static_cast<int>(std::max<int64_t>(*layers, 0));
  job.steps = static_cast<int>(std::max<int64_t>(
      1, *spans / (job.ranks * (kSyntheticSpansPerStep + 2 * job.layers))));
  job.spans_per_batch = 1024;
  job.jitter_ns = 3000;
  job.node_skew_ns = 25000;
  job.time_ordered = true;  // each part a slice of every rank's time
  std::vector<std::vector<v1::Batch>> batches;
  for (int node = 0; node < job.nodes; ++node) {
    batches.push_back(SyntheticBatches(job, node));
  }

  StoreOptions options;
  options.full_sync = false;
  auto writer = Store::Open(path, options);
  Check(writer.status(), "open");
  auto plain = Store::Open(plain_path, options);
  Check(plain.status(), "open");
  EvidenceLog log(int64_t{4} << 30);
  (*writer)->Observe(&log);
  ClockSolveState logged_state;
  std::optional<StoredJobResult> logged_solution;
  double logged_ms = 0, write_logged_ms = 0, write_plain_ms = 0;
  int64_t logged_chunks = 0;
  StoreOptions read_only;
  read_only.read_only = true;
  const int64_t n_parts = std::max<int64_t>(*parts, 1);
  double update_ms = 0, incremental_ms = 0, whole_ms = 0;
  ClockSolveState state;  // the collector's, kept between updates
  int64_t update_chunks = 0, whole_chunks = 0, evidence_spans = 0;
  int64_t job_spans = 0, job_chunks = 0;
  for (int64_t part = 0; part < n_parts; ++part) {
    std::vector<const v1::Batch*> pointers;
    for (const std::vector<v1::Batch>& of_node : batches) {
      const size_t from = of_node.size() * part / n_parts;
      const size_t to = of_node.size() * (part + 1) / n_parts;
      for (size_t i = from; i < to; ++i) pointers.push_back(&of_node[i]);
    }
    for (int w = 0; w < 2; ++w) {
      const bool observed = (w + part) % 2 == 0;
      const Clock::time_point t = Clock::now();
      Check((observed ? *writer : *plain)->Write(pointers).status(), "write");
      (observed ? write_logged_ms : write_plain_ms) += Ms(t);
    }

    auto reader = Store::Open(path, read_only);
    Check(reader.status(), "reopen");
    Check((*reader)->BeginSnapshot(), "snapshot");
    auto catalog = (*reader)->LoadCatalog("bench");
    Check(catalog.status(), "catalog");
    job_spans = catalog->job.spans;
    job_chunks = catalog->job.chunks;
    auto stored = (*reader)->LoadClockSolution(catalog->job.id);
    Check(stored.status(), "stored solution");
    std::string updated, incremental, whole, logged;
    // The four in turn, each part starting with the next one.
    for (int turn = 0; turn < 4; ++turn) {
      const int leg = static_cast<int>((turn + part) % 4);
      if (leg == 0) {
        // Without a kept state (the solution is the incremental leg's to
        // store).
        ScanStats read;
        const Clock::time_point t = Clock::now();
        auto clocks =
            JobClocks::Update(**reader, *catalog, &*stored, nullptr, &read);
        Check(clocks.status(), "update");
        update_ms = Ms(t);
        update_chunks = read.chunks_read;
        evidence_spans = clocks->evidence_spans();
        updated = clocks->new_solution()->data;
      } else if (leg == 1) {
        // With the state kept since the last part, as the collector does.
        const Clock::time_point t = Clock::now();
        auto clocks = JobClocks::Update(**reader, *catalog, &*stored, nullptr,
                                        nullptr, &state);
        Check(clocks.status(), "incremental update");
        incremental_ms = Ms(t);
        incremental = clocks->new_solution()->data;
        Check((*writer)->SaveClockSolution(catalog->job.id,
                                           *clocks->new_solution()),
              "store solution");
      } else if (leg == 3) {
        ScanStats read;
        const Clock::time_point t = Clock::now();
        auto clocks = JobClocks::Update(**reader, *catalog, &logged_solution,
                                        nullptr, &read, &logged_state, &log);
        Check(clocks.status(), "logged update");
        logged_ms = Ms(t);
        logged_chunks = read.chunks_read;
        logged_solution = clocks->new_solution();
        logged = clocks->new_solution()->data;
      } else {
        JobRead read;
        ScanStats stats;
        read.stats = &stats;
        const Clock::time_point t = Clock::now();
        auto clocks = JobClocks::Load(**reader, *catalog, nullptr, read);
        Check(clocks.status(), "whole solve");
        whole_ms = Ms(t);
        whole_chunks = stats.chunks_read;
        whole = clocks->new_solution()->data;
      }
    }
    if (updated != whole || incremental != whole || logged != whole) {
      fprintf(stderr,
              "clock_update_bench: part %lld: the %s solution differs "
              "from the whole job's\n",
              static_cast<long long>(part + 1),
              updated != whole       ? "update's"
              : incremental != whole ? "incremental update's"
                                     : "logged update's");
      return 1;
    }
    printf(
        "part %lld/%lld: %lld spans, %lld chunks; update %.1f ms (%lld chunks "
        "read, %lld spans of evidence), incremental %.1f ms (%lld settled, "
        "%zu open; %lld incremental, %lld whole so far), whole solve %.1f ms "
        "(%lld chunks read); logged %.1f ms (%lld chunks read); same "
        "solution\n",
        static_cast<long long>(part + 1), static_cast<long long>(n_parts),
        static_cast<long long>(job_spans), static_cast<long long>(job_chunks),
        update_ms, static_cast<long long>(update_chunks),
        static_cast<long long>(evidence_spans), incremental_ms,
        static_cast<long long>(state.settled_spans), state.open.size(),
        static_cast<long long>(state.incremental_updates),
        static_cast<long long>(state.full_solves), whole_ms,
        static_cast<long long>(whole_chunks), logged_ms,
        static_cast<long long>(logged_chunks));
  }
  const EvidenceLog::Counters counters = log.counters();
  printf(
      "{\"bench\": \"clocks\", \"nodes\": %d, \"ranks\": %d, \"spans\": %lld, "
      "\"parts\": %lld, \"evidence_spans\": %lld, \"update_ms\": %.1f, "
      "\"whole_ms\": %.1f, \"update_over_whole\": %.3f, "
      "\"incremental_ms\": %.1f, \"incremental_over_whole\": %.3f, "
      "\"incremental_over_update\": %.3f, \"settled_spans\": %lld, "
      "\"open_spans\": %zu, \"incremental_updates\": %lld, "
      "\"whole_updates\": %lld, \"state_bytes\": %lld, "
      "\"update_chunks_read\": %lld, \"whole_chunks_read\": %lld, "
      "\"logged_ms\": %.1f, \"logged_over_incremental\": %.3f, "
      "\"logged_chunks_read\": %lld, \"log_taken\": %lld, "
      "\"log_missed\": %lld, \"write_logged_ms\": %.1f, "
      "\"write_plain_ms\": %.1f, \"write_logged_over_plain\": %.3f, "
      "\"same_solution\": true}\n",
      job.nodes, job.ranks, static_cast<long long>(job_spans),
      static_cast<long long>(n_parts), static_cast<long long>(evidence_spans),
      update_ms, whole_ms, update_ms / whole_ms, incremental_ms,
      incremental_ms / whole_ms, incremental_ms / update_ms,
      static_cast<long long>(state.settled_spans), state.open.size(),
      static_cast<long long>(state.incremental_updates),
      static_cast<long long>(state.full_solves),
      static_cast<long long>(state.MemoryBytes()),
      static_cast<long long>(update_chunks),
      static_cast<long long>(whole_chunks), logged_ms,
      logged_ms / incremental_ms, static_cast<long long>(logged_chunks),
      static_cast<long long>(counters.taken),
      static_cast<long long>(counters.missed), write_logged_ms, write_plain_ms,
      write_logged_ms / write_plain_ms);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
    std::remove((plain_path + suffix).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace meridian

int main(int argc, char** argv) { return meridian::Run(argc, argv); }
