// analysis_bench: the analyses over a large job, timed against reading the
// same spans from the store, in one run (the machines are shared and noisy:
// the ratios are the figures to compare). See docs/PERFORMANCE.md.
//
//   read      Store::Scan of every span of the job (the floor any query
//             pays)
//   load      JobSpans::Load: one scan that feeds the clock refinement
//             (JobClocks) and keeps the spans, then places them on the
//             collector's clock and sorts them by track
//   graph     DependencyGraph: pieces, collectives, messages
//   path      CriticalPath over the whole job
//   also      stragglers, steps and wait states over the whole job
//   one step  JobSpans::LoadStep + graph + path of the middle step: only
//             the chunks that hold it (checked against the whole job's
//             path of that step)
//   memory    JobSpans + DependencyGraph bytes per span
// The job is the synthetic one (testing/synthetic_job.h), written straight
// into a store first (--store sqlite, the default: a file under --dir;
// --store clickhouse: a clickhouse-server started for the run, as the
// tests start one). With --one-step only the write and the one-step path
// are timed (a job too large to analyse whole: 100M spans). The last line
// printed is one JSON object.
//
// With --replay (`./bench/run.sh replay`): `meridian replay`'s work over the
// whole job against reading it, alternated over --rounds rounds (default
// 3; the medians are the figures): read (Store::Scan), then replay (Replay
// with --rank-like 1=0 and --scale MPI_All*=0.5, then ReplayReport: the
// predicted timeline's graph and both critical paths). The query's load
// and graph are timed once, as above.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "query/analysis/critical_path.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/analysis/replay.h"
#include "query/analysis/replay_report.h"
#include "query/analysis/step_breakdown.h"
#include "query/analysis/stragglers.h"
#include "query/analysis/wait_states.h"
#include "query/clocks/job_clocks.h"
#include "store/store.h"
#include "testing/synthetic_job.h"
#include "testing/synthetic_store.h"
#include "testing/test_store.h"

namespace meridian {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) {
    fprintf(stderr, "analysis_bench: %s: %s\n", what,
            std::string(status.message()).c_str());
    exit(1);
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Reading the job, then replaying it, `rounds` times; the medians.
int ReplayRounds(Store& store, const JobCatalog& catalog, int64_t rounds) {
  std::optional<JobClocks> clocks;
  Clock::time_point t = Clock::now();
  auto loaded = JobSpans::Load(store, catalog, &clocks);
  Check(loaded.status(), "load");
  const double load_s = Seconds(t);
  t = Clock::now();
  DependencyGraph graph(*loaded);
  const double graph_s = Seconds(t);
  ReplayChanges changes;
  changes.rank_like = {{1, 0}};
  changes.scales = {{"MPI_All*", 0.5}};
  std::vector<double> read_s, simulate_s, replay_s, ratio;
  v1::ReplayReply reply;
  for (int64_t round = 0; round < rounds; ++round) {
    t = Clock::now();
    int64_t read = 0;
    Check(store.Scan(catalog.job, ScanRange{},
                     [&read](const StoredSpan&) {
                       ++read;
                       return true;
                     }),
          "scan");
    read_s.push_back(Seconds(t));
    t = Clock::now();
    auto times = Replay(graph, changes);
    Check(times.status(), "replay");
    simulate_s.push_back(Seconds(t));
    auto report = ReplayReport(graph, *times, std::nullopt);
    Check(report.status(), "report");
    replay_s.push_back(Seconds(t));
    ratio.push_back(replay_s.back() / read_s.back());
    reply = std::move(*report);
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  const int64_t spans = catalog.job.spans;
  printf("job: %lld spans; load %.3f s, graph %.3f s (once)\n",
         static_cast<long long>(spans), load_s, graph_s);
  for (size_t r = 0; r < read_s.size(); ++r) {
    printf(
        "round %zu: read %.3f s, replay %.3f s (simulation %.3f s, report "
        "%.3f s), replay / read %.2f\n",
        r, read_s[r], replay_s[r], simulate_s[r], replay_s[r] - simulate_s[r],
        ratio[r]);
  }
  printf(
      "replay: measured %.3f ms, predicted %.3f ms, %lld spans scaled, %lld "
      "dependencies broken\n",
      reply.measured_ns() / 1e6, reply.predicted_ns() / 1e6,
      static_cast<long long>(reply.scaled_spans()),
      static_cast<long long>(reply.broken_dependencies()));
  printf(
      "{\"spans\":%lld,\"rounds\":%lld,\"read_s\":%.3f,\"replay_s\":%.3f,"
      "\"simulate_s\":%.3f,\"replay_over_read\":%.3f,\"load_s\":%.3f,"
      "\"graph_s\":%.3f,\"query_over_read\":%.3f,\"max_rss_mb\":%.0f}\n",
      static_cast<long long>(spans), static_cast<long long>(rounds),
      Median(read_s), Median(replay_s), Median(simulate_s), Median(ratio),
      load_s, graph_s, (load_s + graph_s + Median(replay_s)) / Median(read_s),
      usage.ru_maxrss / 1024.0);
  return 0;
}

// --one-step: the middle step's critical path, as `meridian critical-path
// --step N` computes it, and what it read.
int OneStep(Store& store, const JobCatalog& catalog, int64_t step,
            const std::string& kind, double write_s, int64_t store_bytes,
            const std::string& path) {
  std::vector<double> times;
  ScanStats step_read;
  v1::CriticalPathReply step_path;
  for (int round = 0; round < 3; ++round) {  // the median of three
    Clock::time_point t = Clock::now();
    std::optional<JobClocks> step_clocks;
    step_read = ScanStats{};
    auto step_spans =
        JobSpans::LoadStep(store, catalog, step, &step_clocks, &step_read);
    Check(step_spans.status(), "step load");
    DependencyGraph step_graph(*step_spans);
    const std::optional<TimeWindow> window = StepWindow(*step_spans, step);
    if (!window) {
      fprintf(stderr, "analysis_bench: step %lld not found\n",
              static_cast<long long>(step));
      return 1;
    }
    step_path = CriticalPath(step_graph, *window);
    times.push_back(Seconds(t));
  }
  const int64_t spans = catalog.job.spans;
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  printf("max RSS of the whole run (the write included): %.0f MB\n",
         usage.ru_maxrss / 1024.0);
  printf(
      "critical path (step %lld): %.3f s (median of 3), %d segments; read "
      "%zu of the job's %lld chunks (%lld decodes, %lld spans decoded)\n",
      static_cast<long long>(step), Median(times), step_path.segments_size(),
      step_read.chunk_ids.size(), static_cast<long long>(catalog.job.chunks),
      static_cast<long long>(step_read.chunks_read),
      static_cast<long long>(step_read.spans_decoded));
  printf(
      "{\"store\":\"%s\",\"spans\":%lld,\"write_s\":%.1f,"
      "\"bytes_per_span\":%.2f,\"step_path_s\":%.4f,"
      "\"step_chunks_read\":%zu,\"step_spans_decoded\":%lld,"
      "\"chunks\":%lld,\"max_rss_mb\":%.0f}\n",
      kind.c_str(), static_cast<long long>(spans), write_s,
      static_cast<double>(store_bytes) / spans, Median(times),
      step_read.chunk_ids.size(),
      static_cast<long long>(step_read.spans_decoded),
      static_cast<long long>(catalog.job.chunks), usage.ru_maxrss / 1024.0);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
  return 0;
}

int Run(int argc, char** argv) {
  auto line = CommandLine::Parse(
      std::vector<std::string>(argv, argv + argc), 1,
      {"spans", "dir", "batch", "rounds", "store", "jitter-ns"},
      {"replay", "one-step"});
  Check(line.status(), "flags");
  auto wanted = line->GetInt("spans", 1000000);
  Check(wanted.status(), "--spans");
  const std::string dir = line->Get("dir", "/tmp");
  auto batch = line->GetInt("batch", 4096);  // spans per agent batch
  Check(batch.status(), "--batch");
  const std::string kind = line->Get("store", "sqlite");
  if (kind != "sqlite" && kind != "clickhouse") {
    fprintf(stderr, "analysis_bench: --store is sqlite or clickhouse\n");
    return 2;
  }
  std::string path = dir + "/meridian-analysis-bench.db";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
  if (kind == "clickhouse") {
    auto location = NewStoreLocation(StoreKind::kClickHouse, "analysis_bench");
    Check(location.status(), "clickhouse-server");
    path = *location;
  }

  SyntheticJob job;
  job.job = "bench";
  job.ranks = 16;
  job.nodes = 2;
  job.steps = static_cast<int>(*wanted / (job.ranks * kSyntheticSpansPerStep));
  job.spans_per_batch = static_cast<int>(*batch);
  auto jitter = line->GetInt("jitter-ns", 0);
  Check(jitter.status(), "--jitter-ns");
  job.jitter_ns = std::max<int64_t>(*jitter, 0);
  double write_s = 0;
  int64_t store_bytes = 0;
  {
    StoreOptions options;
    options.full_sync = false;
    auto store = Store::Open(path, options);
    Check(store.status(), "open");
    // Made as it is written: memory for 64 batches.
    Clock::time_point t = Clock::now();
    Check(WriteSyntheticJob(job, **store).status(), "write");
    write_s = Seconds(t);
    auto bytes = (*store)->FileBytes();
    Check(bytes.status(), "store size");
    store_bytes = *bytes;
  }

  StoreOptions read_only;
  read_only.read_only = true;
  auto opened = Store::Open(path, read_only);
  Check(opened.status(), "reopen");
  Store& store = **opened;
  Check(store.BeginSnapshot(), "snapshot");
  auto catalog = store.LoadCatalog("bench");
  Check(catalog.status(), "catalog");
  const int64_t spans = catalog->job.spans;
  printf(
      "%s store: wrote %lld spans in %.1f s (synthetic batches made as "
      "they are written), %.1f bytes a span\n",
      kind.c_str(), static_cast<long long>(spans), write_s,
      static_cast<double>(store_bytes) / spans);
  if (line->Has("one-step"))
    return OneStep(store, *catalog, job.steps / 2, kind, write_s, store_bytes,
                   path);
  if (line->Has("replay")) {
    auto rounds = line->GetInt("rounds", 3);
    Check(rounds.status(), "--rounds");
    const int status =
        ReplayRounds(store, *catalog, std::max<int64_t>(*rounds, 1));
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((path + suffix).c_str());
    }
    return status;
  }

  Clock::time_point t = Clock::now();
  int64_t read = 0;
  Check(store.Scan(catalog->job, ScanRange{},
                   [&read](const StoredSpan&) {
                     ++read;
                     return true;
                   }),
        "scan");
  const double read_s = Seconds(t);

  t = Clock::now();
  std::optional<JobClocks> clocks;
  auto loaded = JobSpans::Load(store, *catalog, &clocks);
  Check(loaded.status(), "load");
  const double load_s = Seconds(t);

  t = Clock::now();
  DependencyGraph graph(*loaded);
  const double graph_s = Seconds(t);

  t = Clock::now();
  v1::CriticalPathReply path_reply = CriticalPath(graph, JobWindow(*loaded));
  const double path_s = Seconds(t);

  t = Clock::now();
  v1::StragglersReply stragglers = Stragglers(graph, 20);
  const double stragglers_s = Seconds(t);
  t = Clock::now();
  v1::StepsReply steps = StepBreakdown(graph);
  const double steps_s = Seconds(t);
  t = Clock::now();
  const WaitStatesResult waits = WaitStates(graph, /*by_step=*/false);
  const double waits_s = Seconds(t);

  const int64_t step = job.steps / 2;
  t = Clock::now();
  std::optional<JobClocks> step_clocks;
  ScanStats step_read;
  auto step_spans =
      JobSpans::LoadStep(store, *catalog, step, &step_clocks, &step_read);
  Check(step_spans.status(), "step load");
  DependencyGraph step_graph(*step_spans);
  const std::optional<TimeWindow> step_window = StepWindow(*step_spans, step);
  v1::CriticalPathReply step_path =
      CriticalPath(step_graph, step_window.value_or(TimeWindow{}));
  const double step_path_s = Seconds(t);
  const std::optional<TimeWindow> whole_window = StepWindow(*loaded, step);
  if (!step_window || !whole_window ||
      CriticalPath(graph, *whole_window).DebugString() !=
          step_path.DebugString()) {
    fprintf(stderr,
            "analysis_bench: step %lld's path differs from the whole job's\n",
            static_cast<long long>(step));
    // With jitter a step's clocks are refined over its own spans, and its
    // path may then differ (docs/analysis.md): said, not a failure.
    if (job.jitter_ns == 0) return 1;
  }

  const double bytes_per_span =
      static_cast<double>(loaded->MemoryBytes() + graph.MemoryBytes()) /
      static_cast<double>(spans);
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  const double analysis_s = graph_s + path_s;
  printf("job: %lld spans (%d ranks, %d steps), read back %lld\n",
         static_cast<long long>(spans), job.ranks, job.steps,
         static_cast<long long>(read));
  printf("read (Store::Scan):          %8.3f s  %6.0f ns/span\n", read_s,
         1e9 * read_s / spans);
  printf("load (JobSpans::Load):       %8.3f s  (one scan, clocks, place)\n",
         load_s);
  printf("graph (DependencyGraph):     %8.3f s\n", graph_s);
  printf("critical path (whole job):   %8.3f s  %d segments\n", path_s,
         path_reply.segments_size());
  printf(
      "stragglers / steps:          %8.3f s / %.3f s  (%lld instances, "
      "%d steps)\n",
      stragglers_s, steps_s, static_cast<long long>(stragglers.instances()),
      steps.steps_size());
  printf("waits (whole job):           %8.3f s  (%zu pattern entries)\n",
         waits_s, waits.patterns.size());
  printf(
      "critical path (step %lld):  %8.3f s  read %zu of the job's %lld "
      "chunks (%lld decodes)\n",
      static_cast<long long>(step), step_path_s, step_read.chunk_ids.size(),
      static_cast<long long>(step_read.chunks_read),
      static_cast<long long>(catalog->job.chunks));
  printf("analysis (graph + path) / read: %.2f\n", analysis_s / read_s);
  printf("critical-path query (load + graph + path) / read: %.2f\n",
         (load_s + analysis_s) / read_s);
  printf("memory: %.1f bytes/span (JobSpans %zu + graph), max RSS %.0f MB\n",
         bytes_per_span, sizeof(JobSpan), usage.ru_maxrss / 1024.0);
  printf(
      "{\"spans\":%lld,\"read_s\":%.3f,\"load_s\":%.3f,"
      "\"graph_s\":%.3f,\"path_s\":%.3f,\"stragglers_s\":%.3f,"
      "\"steps_s\":%.3f,\"waits_s\":%.3f,\"analysis_over_read\":%.3f,"
      "\"query_over_read\":%.3f,\"bytes_per_span\":%.1f,\"max_rss_mb\":%.0f,"
      "\"step_path_s\":%.4f,\"step_chunks_read\":%zu,\"chunks\":%lld}\n",
      static_cast<long long>(spans), read_s, load_s, graph_s, path_s,
      stragglers_s, steps_s, waits_s, analysis_s / read_s,
      (load_s + analysis_s) / read_s, bytes_per_span, usage.ru_maxrss / 1024.0,
      step_path_s, step_read.chunk_ids.size(),
      static_cast<long long>(catalog->job.chunks));
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace meridian

int main(int argc, char** argv) { return meridian::Run(argc, argv); }
