// meridian-collector: receives agents' span streams, stores them in SQLite,
// answers queries. See docs/cli.md.
#include <signal.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "collector/collector.h"
#include "collector/collector_usage.h"
#include "common/command_line.h"
#include "common/memory.h"
#include "common/version.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "store/store.h"
#include "store/store_copy.h"

namespace {

// --migrate-from: copies one store into another; 0 on success.
int Migrate(const std::string& from_location, const std::string& to_location) {
  meridian::StoreOptions read_only;
  read_only.read_only = true;
  auto from = meridian::Store::Open(from_location, read_only);
  if (!from.ok()) {
    fprintf(stderr, "meridian-collector: %s\n",
            std::string(from.status().message()).c_str());
    return 1;
  }
  auto to = meridian::Store::Open(to_location);
  if (!to.ok()) {
    fprintf(stderr, "meridian-collector: %s\n",
            std::string(to.status().message()).c_str());
    return 1;
  }
  auto report = meridian::CopyStore(
      **from, **to, [](const std::string& job, int64_t spans) {
        printf("copied job %s: %lld spans\n", job.c_str(),
               static_cast<long long>(spans));
        fflush(stdout);
      });
  if (!report.ok()) {
    fprintf(stderr, "meridian-collector: %s\n",
            std::string(report.status().message()).c_str());
    return 1;
  }
  printf("copied %lld jobs, %lld spans, %lld batches (%lld stored before)\n",
         static_cast<long long>(report->jobs),
         static_cast<long long>(report->spans),
         static_cast<long long>(report->batches),
         static_cast<long long>(report->duplicates));
  return 0;
}

// Process-wide settings, before any thread starts.
void SetUpProcess() {
  // Debian's Abseil is built without NDEBUG, so its Mutex would check lock
  // order (deadlock detection) on every acquisition: a debugging aid whose
  // cost showed in profiles of both daemons.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Batches' and solves' buffers reused, not mapped afresh each time.
  meridian::ReuseFreedMemory();
}

// The value of integer flag --NAME (`fallback` if not given) if it lies in
// [lo, hi]; else nullopt, with "meridian-collector: REFUSAL" printed.
std::optional<int64_t> Bounded(const meridian::CommandLine& line,
                               const char* name, int64_t fallback, int64_t lo,
                               int64_t hi, const char* refusal) {
  auto value = line.GetInt(name, fallback);
  if (value.ok() && *value >= lo && *value <= hi) return *value;
  fprintf(stderr, "meridian-collector: %s\n", refusal);
  return std::nullopt;
}

// The limits' flags into `options`; false (a refusal printed) if one is
// out of its range.
bool ParseLimits(const meridian::CommandLine& line,
                 meridian::CollectorOptions* options) {
  constexpr int64_t kDayMs = 24 * 3600 * 1000;
  const char* const kRefresh =
      "--refresh-after-ms and --summarise-every-ms must be 0 to 86400000";
  const auto retention = Bounded(line, "retention-days", 0, 0, 36500,
                                 "--retention-days must be 0 to 36500");
  if (!retention) return false;
  const auto batch_mib = Bounded(line, "max-batch-mib", 16, 1, 1024,
                                 "--max-batch-mib must be 1 to 1024");
  if (!batch_mib) return false;
  const auto analysis_mib =
      Bounded(line, "analysis-memory-mib", 4096, 1, 1 << 24,
              "--analysis-memory-mib must be 1 to 16777216");
  if (!analysis_mib) return false;
  const auto analysis_wait_ms =
      Bounded(line, "analysis-wait-ms", 10000, 0, 3600000,
              "--analysis-wait-ms must be 0 to 3600000");
  if (!analysis_wait_ms) return false;
  const auto refresh_ms =
      Bounded(line, "refresh-after-ms", 5000, 0, kDayMs, kRefresh);
  if (!refresh_ms) return false;
  const auto summarise_ms =
      Bounded(line, "summarise-every-ms", 30000, 0, kDayMs, kRefresh);
  if (!summarise_ms) return false;
  const auto max_streams =
      Bounded(line, "max-streams", options->ingest.max_streams, 1, 100000,
              "--max-streams must be 1 to 100000");
  if (!max_streams) return false;
  const auto queue_mib = Bounded(line, "max-queue-mib", 256, 1, 1 << 20,
                                 "--max-queue-mib must be 1 to 1048576");
  if (!queue_mib) return false;
  const auto stall_s = Bounded(line, "stall-after", 60, 1, 86400,
                               "--stall-after must be seconds, 1 to 86400");
  if (!stall_s) return false;
  options->stall_after = absl::Seconds(*stall_s);
  options->on_stall = line.Get("on-stall");
  options->on_slowdown = line.Get("on-slowdown");
  options->retention_days = static_cast<int>(*retention);
  options->max_message_bytes = static_cast<int>(*batch_mib) << 20;
  options->analysis_memory_bytes = static_cast<uint64_t>(*analysis_mib) << 20;
  options->analysis_wait = absl::Milliseconds(*analysis_wait_ms);
  options->refresh_after = absl::Milliseconds(*refresh_ms);
  options->summarise_every = absl::Milliseconds(*summarise_ms);
  options->ingest.max_streams = static_cast<int>(*max_streams);
  options->max_queue_bytes = static_cast<size_t>(*queue_mib) << 20;
  return true;
}

// Starts the collector, serves until SIGTERM or SIGINT, then stops it.
int Serve(const meridian::CollectorOptions& options, const std::string& sync) {
  // Logs go to stderr; stdout carries only the "listening on" line.
  spdlog::set_default_logger(spdlog::stderr_color_mt("meridian-collector"));

  // Signals are taken by sigwait below, never by a handler in another thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto collector = meridian::Collector::Start(options);
  if (!collector.ok()) {
    spdlog::error("{}", std::string(collector.status().message()));
    return 1;
  }
  // Scripts and tests read this line to learn the port.
  std::string web;
  if ((*collector)->http_port() != 0) {
    const std::string host = options.http.substr(0, options.http.rfind(':'));
    web = absl::StrCat(", web http://", host, ":", (*collector)->http_port(),
                       "/");
  }
  spdlog::info("listening on {}, store {} (sync={})", (*collector)->address(),
               options.db_path, sync);
  if ((*collector)->metrics_port() != 0) {
    // The port actually bound (0 asked for: a free one).
    spdlog::info("metrics on http://{}:{}/metrics",
                 options.metrics.substr(0, options.metrics.rfind(':')),
                 (*collector)->metrics_port());
  }
  if (!web.empty()) spdlog::info("web page on {}", web.substr(6));
  // Last: whoever waits for this line finds the log lines above written.
  printf("meridian-collector listening on %s, store %s%s\n",
         (*collector)->address().c_str(), options.db_path.c_str(), web.c_str());
  fflush(stdout);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("{}: finishing calls in flight, then exiting",
               signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  (*collector)->Shutdown();
  const meridian::IngestCounters& c = (*collector)->counters();
  spdlog::info(
      "stopped: {} batches stored ({} spans), {} duplicate, {} rejected; {} "
      "invalid spans dropped",
      c.batches_stored.load(), c.spans_stored.load(),
      c.batches_duplicate.load(), c.batches_rejected.load(),
      c.spans_invalid.load());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  SetUpProcess();
  std::vector<std::string> args(argv, argv + argc);
  auto line = meridian::CommandLine::Parse(
      args, 1, meridian::CollectorValueFlags(), meridian::CollectorSwitches());
  if (line.ok() && line->Has("version")) {
    printf("meridian-collector %s\n", meridian::kVersion);
    return 0;
  }
  if (!line.ok() || line->Has("help") || !line->positional().empty()) {
    if (!line.ok())
      fprintf(stderr, "meridian-collector: %s\n",
              std::string(line.status().message()).c_str());
    fputs(meridian::kCollectorUsage,
          line.ok() && line->Has("help") ? stdout : stderr);
    return line.ok() && line->Has("help") ? 0 : 2;
  }
  meridian::CollectorOptions options;
  options.listen = line->Get("listen", options.listen);
  if (line->Has("db") && line->Has("store")) {
    fprintf(stderr, "meridian-collector: give --store or --db, not both\n");
    return 2;
  }
  options.db_path = line->Get("store", line->Get("db", options.db_path));
  if (line->Has("create-store")) {
    auto store = meridian::Store::Open(options.db_path);
    if (!store.ok()) {
      fprintf(stderr, "meridian-collector: %s\n",
              std::string(store.status().message()).c_str());
      return 1;
    }
    printf("store %s is ready\n", options.db_path.c_str());
    return 0;
  }
  if (line->Has("migrate-from")) {
    return Migrate(line->Get("migrate-from", ""), options.db_path);
  }
  std::string sync = line->Get("sync", "full");
  if (sync != "full" && sync != "normal") {
    fprintf(stderr,
            "meridian-collector: --sync is full or normal, not \"%s\"\n",
            sync.c_str());
    return 2;
  }
  options.full_sync = sync == "full";
  options.tls_cert = line->Get("tls-cert", "");
  options.tls_key = line->Get("tls-key", "");
  options.tls_ca = line->Get("tls-ca", "");
  options.auth_tokens = line->Get("auth-tokens", "");
  options.insecure = line->Has("insecure");
  options.metrics = line->Get("metrics", "");
  options.http = line->Get("http", "");
  options.perfetto_ui = line->Get("perfetto-ui", options.perfetto_ui);
  if (!ParseLimits(*line, &options)) return 2;

  return Serve(options, sync);
}
