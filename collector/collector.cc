#include "collector/collector.h"

#include <signal.h>

#include <chrono>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/memory.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "net/client_channel.h"
#include "spdlog/spdlog.h"
#include "store/clickhouse_store.h"

namespace meridian {

namespace {

// A failpoint for the test of exactly-once on ClickHouse
// (tests/clickhouse_collectors_test.cc): with
// MERIDIAN_FAILPOINT_KILL_BEFORE_COMMIT=N the collector SIGKILLs itself in
// its Nth write to a ClickHouse store, after the chunks and before the
// commit record: the one moment SQLite's transactions make harmless and
// ClickHouse's lack of them does not. Unset, nothing changes.
void ArmFailpoint(Store* store) {
  const char* value = getenv("MERIDIAN_FAILPOINT_KILL_BEFORE_COMMIT");
  auto* clickhouse = dynamic_cast<ClickHouseStore*>(store);
  int n = 0;
  if (value == nullptr || clickhouse == nullptr ||
      !absl::SimpleAtoi(value, &n) || n < 1) {
    return;
  }
  spdlog::warn("failpoint armed: SIGKILL before the commit of write {}", n);
  clickhouse->set_before_commit_for_testing([n, writes = 0]() mutable {
    if (++writes == n) raise(SIGKILL);
    return absl::OkStatus();
  });
}

// Whether HOST:PORT is a loopback address (nobody else can reach it).
bool Loopback(const std::string& listen) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host == "localhost" || host == "::1" ||
         absl::StartsWith(host, "127.") || absl::StartsWith(listen, "unix:");
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const CollectorOptions& options) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "give both --tls-cert and --tls-key, or neither");
  }
  if (options.tls_cert.empty()) {
    if (!options.tls_ca.empty()) {
      return absl::InvalidArgumentError(
          "--tls-ca (client certificates) needs --tls-cert and --tls-key");
    }
    return grpc::InsecureServerCredentials();
  }
  auto cert = ReadSmallFile(options.tls_cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadSmallFile(options.tls_key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(
      options.tls_ca.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!options.tls_ca.empty()) {
    auto ca = ReadSmallFile(options.tls_ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
  }
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(ssl);
}

// Runs `work` on the writer thread and waits for its result.
template <typename T>
absl::StatusOr<T> OnWriter(
    BatchWriter* writer,
    const std::function<absl::StatusOr<T>(Store& store)>& work) {
  absl::Notification done;
  absl::StatusOr<T> result = absl::UnavailableError("not run");
  if (!writer->Schedule([&](Store& store) {
        result = work(store);
        done.Notify();
      })) {
    return absl::UnavailableError("the collector is shutting down");
  }
  done.WaitForNotification();
  return result;
}

}  // namespace

absl::Status Collector::DeleteOldJobs(int days) {
  const int64_t cutoff =
      absl::ToUnixNanos(absl::Now() - absl::Hours(24) * days);
  auto deleted = OnWriter<std::vector<std::string>>(
      writer_.get(),
      [cutoff](Store& store) { return store.DeleteJobsEndedBefore(cutoff); });
  if (!deleted.ok()) return deleted.status();
  for (const std::string& job : *deleted) {
    spdlog::info("retention: deleted job \"{}\" (older than {} days)", job,
                 days);
  }
  return absl::OkStatus();
}

void Collector::RetentionLoop(int days) {
  absl::MutexLock lock(&retention_mu_);
  auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(retention_mu_) {
    return retention_stop_;
  };
  while (
      !retention_mu_.AwaitWithTimeout(absl::Condition(&stop), absl::Hours(1))) {
    retention_mu_.Unlock();
    absl::Status status = DeleteOldJobs(days);
    if (!status.ok()) {
      spdlog::error("retention: {}", std::string(status.message()));
    }
    retention_mu_.Lock();
  }
}

namespace {

// The refusals to serve without the security a listening address needs.
absl::Status CheckSecurity(const CollectorOptions& options) {
  if (!Loopback(options.listen) && !options.insecure &&
      (options.tls_cert.empty() || options.auth_tokens.empty())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to listen on ", options.listen,
        " without TLS and tokens: anyone who reaches it could write into "
        "and read every job. Give --tls-cert, --tls-key and --auth-tokens "
        "(docs/security.md), or --insecure on a network where every client "
        "is trusted"));
  }
  if (!options.http.empty() && !options.tls_ca.empty() &&
      options.auth_tokens.empty()) {
    return absl::FailedPreconditionError(
        "--http with --tls-ca and no --auth-tokens: clients are known by "
        "their certificates, which the web page's requests cannot carry; "
        "give --auth-tokens (the page sends a token) or drop --http");
  }
  return absl::OkStatus();
}

// The collector's metrics of its evidence log (none held: `log` null).
void AddEvidenceLogMetrics(const EvidenceLog* log,
                           std::vector<prometheus::MetricFamily>* out) {
  const EvidenceLog::Counters c =
      log != nullptr ? log->counters() : EvidenceLog::Counters{};
  out->push_back(GaugeFamily(
      "meridian_collector_evidence_log_bytes",
      "Clock evidence held from what was stored, until a job's clock update "
      "takes it (bounded by an eighth of --analysis-memory-mib).",
      static_cast<double>(c.bytes)));
  out->push_back(LabeledFamily(
      "meridian_collector_evidence_log_takes_total",
      "Clock updates by where their evidence came from: the log (taken) or "
      "the store's chunks (missed: the log lacked some), and jobs the log "
      "forgot for its bound.",
      true, "result",
      {{"taken", static_cast<double>(c.taken)},
       {"missed", static_cast<double>(c.missed)},
       {"forgotten", static_cast<double>(c.forgotten)}}));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Collector>> Collector::Start(
    const CollectorOptions& options) {
  if (absl::Status secure = CheckSecurity(options); !secure.ok()) {
    return secure;
  }
  auto credentials = ServerCredentials(options);
  if (!credentials.ok()) return credentials.status();
  std::shared_ptr<const Authorizer> auth = Authorizer::AllowAll();
  if (!options.auth_tokens.empty()) {
    auto loaded = Authorizer::Load(options.auth_tokens);
    if (!loaded.ok()) return loaded.status();
    auth = *loaded;
  }
  StoreOptions store_options;
  store_options.full_sync = options.full_sync;
  auto store = Store::Open(options.db_path, store_options);
  if (!store.ok()) return store.status();
  ArmFailpoint(store->get());

  std::unique_ptr<Collector> collector(new Collector());
  if (options.refresh_after > absl::ZeroDuration()) {
    // Only where the refresh takes it, at most an eighth of the analysis
    // memory (a whole solve gathered as much evidence from the chunks).
    collector->evidence_log_ = std::make_unique<EvidenceLog>(
        static_cast<int64_t>(options.analysis_memory_bytes / 8));
    (*store)->Observe(collector->evidence_log_.get());
  }
  collector->writer_ = std::make_unique<BatchWriter>(std::move(*store), 200000,
                                                     options.max_queue_bytes);
  collector->auth_ = auth;
  collector->ingest_ = std::make_unique<IngestService>(collector->writer_.get(),
                                                       auth, options.ingest);
  collector->clock_ = std::make_unique<ClockService>(auth);
  BatchWriter* writer = collector->writer_.get();
  collector->control_ = std::make_unique<ControlService>(
      auth,
      [writer](const std::string& job) -> absl::StatusOr<int64_t> {
        return OnWriter<int64_t>(
            writer, [&job](Store& store) { return store.DeleteJob(job); });
      },
      &collector->board_, &collector->slowdowns_);
  collector->stall_watch_ = std::make_unique<StallWatch>(
      &collector->board_, absl::ToInt64Nanoseconds(options.stall_after),
      options.on_stall, &collector->slowdowns_, options.on_slowdown);
  collector->stall_watch_->Start(absl::Seconds(1));
  if (options.retention_days > 0) {
    // The first pass before serving, so a restarted collector never serves
    // what it should have deleted.
    if (absl::Status s = collector->DeleteOldJobs(options.retention_days);
        !s.ok()) {
      return s;
    }
    collector->retention_ =
        std::thread([c = collector.get(), days = options.retention_days] {
          c->RetentionLoop(days);
        });
  }
  collector->StartQuery(options, auth);
  if (absl::Status refresher = collector->StartRefresher(options);
      !refresher.ok()) {
    return refresher;
  }
  if (absl::Status serving = collector->Serve(options, *credentials);
      !serving.ok()) {
    collector->Shutdown();
    return serving;
  }
  std::string host = options.listen.substr(0, options.listen.rfind(':'));
  collector->address_ = absl::StrCat(host, ":", collector->port_);
  return collector;
}

void Collector::StartQuery(const CollectorOptions& options,
                           std::shared_ptr<const Authorizer> auth) {
  BatchWriter* writer = writer_.get();
  query_ = std::make_unique<QueryService>(
      options.db_path,
      [auth](const grpc::ServerContext& context, const std::string& job,
             bool write) {
        const Scope scope = write ? Scope::kWrite : Scope::kRead;
        return job.empty() ? auth->CheckAny(context, scope)
                           : auth->Check(context, scope, job);
      },
      options.analysis_memory_bytes, options.analysis_wait);
  query_->set_evidence_log(evidence_log_.get());
  ActivityBoard* board = &board_;
  const SlowdownWatch* slowdowns = &slowdowns_;
  query_->set_live_board(
      {[board](const std::string& job) { return board->Job(job, absl::Now()); },
       [board] { return board->Jobs(); },
       [slowdowns](const std::string& job) { return slowdowns->Job(job); },
       absl::ToInt64Nanoseconds(options.stall_after)});
  // Clock solutions are stored by the writer, as it stores batches; a query
  // does not wait for it (the next one reads the solution, or solves again).
  query_->set_save_clocks(
      [writer](int64_t job_id, const StoredJobResult& solution) {
        writer->Schedule([job_id, solution](Store& store) {
          absl::Status saved = store.SaveClockSolution(job_id, solution);
          if (!saved.ok()) {
            spdlog::warn("storing job {}'s clock solution: {}", job_id,
                         std::string(saved.message()));
          }
        });
      });

  // Step summaries are stored before the query answers: the next query
  // reads them (a few rows a step, made once per step).
  query_->set_save_summaries(
      [writer](int64_t job_id, const std::vector<StoredStepSummary>& steps,
               const StoredJobResult& state) {
        auto saved = OnWriter<bool>(writer, [&](Store& store) {
          absl::Status status = store.SaveStepSummaries(job_id, steps, state);
          if (!status.ok()) return absl::StatusOr<bool>(status);
          return absl::StatusOr<bool>(true);
        });
        if (!saved.ok()) {
          spdlog::warn("storing job {}'s step summaries: {}", job_id,
                       std::string(saved.status().message()));
        }
      });
}

absl::Status Collector::StartRefresher(const CollectorOptions& options) {
  if (options.refresh_after <= absl::ZeroDuration()) return absl::OkStatus();
  BatchWriter* writer = writer_.get();
  QueryService* query = query_.get();
  refresher_ = std::make_unique<JobRefresher>(
      [query, writer](const std::string& job, bool /*whole*/,
                      const std::atomic<bool>& cancel) {
        // Quiet or not, the same work: the summaries of the new steps,
        // the clocks from the chunks written since.
        absl::Status refreshed = query->Refresh(job, &cancel);
        // What the refresh freed goes back to the system: a collector
        // at rest stays small.
        ReturnFreedMemory();
        if (absl::IsNotFound(refreshed)) return absl::OkStatus();  // deleted
        if (absl::IsCancelled(refreshed)) return refreshed;  // shutting down
        // The clock solution is stored by the writer after what it had
        // queued: done once this empty task has run.
        auto stored = OnWriter<bool>(
            writer, [](Store&) -> absl::StatusOr<bool> { return true; });
        if (refreshed.ok() && !stored.ok()) return stored.status();
        return refreshed;
      },
      options.refresh_after, options.summarise_every);
  JobRefresher* refresher = refresher_.get();
  ingest_->set_on_stored([refresher](const std::string& job, bool ended) {
    ended ? refresher->Ended(job) : refresher->Changed(job);
  });
  // The jobs already stored, too: a job written before a restart (or
  // copied in by --migrate-from) is refreshed like one that just went
  // quiet (a job whose stored results are current costs a read).
  auto stored = OnWriter<std::vector<JobInfo>>(
      writer, [](Store& store) { return store.ListJobs(); });
  if (!stored.ok()) return stored.status();
  for (const JobInfo& job : *stored) refresher->Changed(job.name);
  return absl::OkStatus();
}

absl::Status Collector::Serve(
    const CollectorOptions& options,
    std::shared_ptr<grpc::ServerCredentials> credentials) {
  // grpc.health.v1.Health (SERVING while up; open to every caller, as load
  // balancers and orchestrators ask it) and server reflection.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials, &port_);
  // gRPC shares ports (SO_REUSEPORT) by default: a second collector on the
  // same port would silently take half the agents. Refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  grpc::ResourceQuota quota("meridian-collector");
  quota.SetMaxThreads(2 * options.ingest.max_streams + 64);
  builder.SetResourceQuota(quota);
  // Replies up to what the CLI takes: a whole job's critical path lists
  // every segment (28 MB for a 100M-span job).
  builder.SetMaxSendMessageSize(kCliMaxReplyBytes);
  builder.RegisterService(ingest_.get());
  builder.RegisterService(clock_.get());
  builder.RegisterService(control_.get());
  builder.RegisterService(query_.get());
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen,
                     " (in use, or not an address of this machine?)"));
  }
  if (!options.metrics.empty()) {
    Collector* c = this;
    auto metrics = MetricsEndpoint::Start(options.metrics,
                                          [c] { return c->CollectMetrics(); });
    if (!metrics.ok()) {
      return metrics.status();
    }
    metrics_ = std::move(*metrics);
  }
  if (!options.http.empty()) {
    WebServerOptions web;
    web.address = options.http;
    web.insecure = options.insecure;
    web.perfetto_ui = options.perfetto_ui;
    auto started = WebServer::Start(
        web, server_->InProcessChannel(grpc::ChannelArguments()));
    if (!started.ok()) {
      return started.status();
    }
    web_ = std::move(*started);
  }
  return absl::OkStatus();
}

Collector::~Collector() { Shutdown(); }

AnalysisMemory::Counters Collector::analysis_memory() const {
  return query_->memory_counters();
}

namespace {

// meridian_collector_commit_seconds, a histogram.
prometheus::MetricFamily CommitFamily(const CommitLatencies& latencies) {
  prometheus::MetricFamily commits;
  commits.name = "meridian_collector_commit_seconds";
  commits.help = "Time to commit one transaction (a group of batches).";
  commits.type = prometheus::MetricType::Histogram;
  prometheus::ClientMetric histogram;
  histogram.histogram.sample_count = latencies.samples;
  histogram.histogram.sample_sum = latencies.sum_seconds;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < CommitLatencies::kBuckets; ++i) {
    cumulative += latencies.counts[i];
    histogram.histogram.bucket.push_back(
        {cumulative, CommitLatencies::kBounds[i]});
  }
  histogram.histogram.bucket.push_back(
      {latencies.samples, std::numeric_limits<double>::infinity()});
  commits.metric.push_back(histogram);
  return commits;
}

// meridian_job_slow_ranks' samples: each job's slowdowns now.
std::vector<std::pair<std::string, double>> SlowRanks(
    const SlowdownWatch& slowdowns) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [job, found] : slowdowns.SlowJobs()) {
    out.emplace_back(job, static_cast<double>(found.size()));
  }
  return out;
}

}  // namespace

std::vector<prometheus::MetricFamily> Collector::CollectMetrics() const {
  const IngestCounters& c = ingest_->counters();
  std::vector<prometheus::MetricFamily> out;
  out.push_back(LabeledFamily("meridian_job_stalled_seconds",
                              "Jobs stalled now (docs/health.md): seconds "
                              "since any rank left a traced call.",
                              false, "job", stall_watch_->Stalled()));
  out.push_back(LabeledFamily("meridian_job_slow_ranks",
                              "Ranks of a running job slower than before "
                              "(docs/health.md, Slowdowns).",
                              false, "job", SlowRanks(slowdowns_)));
  out.push_back(LabeledFamily(
      "meridian_collector_batches_total",
      "Batches answered, by result (stored, duplicate, rejected).", true,
      "result",
      {{"stored", static_cast<double>(c.batches_stored.load())},
       {"duplicate", static_cast<double>(c.batches_duplicate.load())},
       {"rejected", static_cast<double>(c.batches_rejected.load())}}));
  out.push_back(CounterFamily("meridian_collector_spans_stored_total",
                              "Spans committed to the store.",
                              static_cast<double>(c.spans_stored.load())));
  out.push_back(
      CounterFamily("meridian_collector_spans_invalid_total",
                    "Spans dropped one by one for breaking a span rule.",
                    static_cast<double>(c.spans_invalid.load())));
  out.push_back(LabeledFamily(
      "meridian_collector_retry_later_total",
      "Times agents were told to retry later, by reason.", true, "reason",
      {{"max_streams", static_cast<double>(c.streams_refused.load())},
       {"queue_full", static_cast<double>(c.batches_deferred.load())},
       {"idle_stream", static_cast<double>(c.streams_idle.load())}}));
  out.push_back(LabeledFamily(
      "meridian_collector_job_spans_total",
      "Spans of stored batches, by job (at most 1000 jobs named).", true, "job",
      ingest_->SpansByJob()));
  const AnalysisMemory::Counters memory = query_->memory_counters();
  out.push_back(GaugeFamily(
      "meridian_collector_analysis_memory_bytes",
      "Bytes of --analysis-memory-mib the queries running now hold.",
      static_cast<double>(memory.held)));
  out.push_back(
      GaugeFamily("meridian_collector_analysis_memory_peak_bytes",
                  "The most bytes of --analysis-memory-mib held at once.",
                  static_cast<double>(memory.peak)));
  out.push_back(LabeledFamily(
      "meridian_collector_analysis_waits_total",
      "Queries that waited for room in --analysis-memory-mib, by outcome.",
      true, "outcome",
      {{"granted",
        static_cast<double>(memory.waited - memory.refused - memory.waiting)},
       {"refused", static_cast<double>(memory.refused)}}));
  out.push_back(GaugeFamily("meridian_collector_ingest_streams",
                            "Ingest streams open now.",
                            static_cast<double>(ingest_->streams())));
  out.push_back(GaugeFamily("meridian_collector_write_queue_bytes",
                            "Bytes of batches waiting to be committed.",
                            static_cast<double>(writer_->queued_bytes())));
  out.push_back(CommitFamily(writer_->commit_latencies()));
  AddEvidenceLogMetrics(evidence_log_.get(), &out);
  const QueryService::ClockUpdates clocks = query_->clock_updates();
  out.push_back(LabeledFamily(
      "meridian_collector_clock_updates_total",
      "Clock solutions brought up to date, by how: from the job's kept "
      "state (incremental) or from all its chunks (whole).",
      true, "solve",
      {{"incremental", static_cast<double>(clocks.incremental)},
       {"whole", static_cast<double>(clocks.whole)}}));
  if (refresher_) {
    const RefreshCounters r = refresher_->counters();
    out.push_back(LabeledFamily(
        "meridian_collector_refreshes_total",
        "Background refreshes of jobs' clocks and step summaries, by result "
        "(dropped: the jobs waiting were at their bound).",
        true, "result",
        {{"done", static_cast<double>(r.refreshed)},
         {"failed", static_cast<double>(r.failed)},
         {"dropped", static_cast<double>(r.dropped)}}));
    out.push_back(CounterFamily("meridian_collector_refresh_seconds_total",
                                "Time spent in background refreshes.",
                                r.seconds));
    out.push_back(
        GaugeFamily("meridian_collector_refresh_waiting",
                    "Jobs waiting for a background refresh, or in one.",
                    static_cast<double>(r.waiting)));
  }
  return out;
}

void Collector::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  if (retention_.joinable()) {
    {
      absl::MutexLock lock(&retention_mu_);
      retention_stop_ = true;
    }
    retention_.join();
  }
  web_.reset();          // its requests ask the server below
  control_->Shutdown();  // a waiting `meridian trace` answers now
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() +
                      absl::ToChronoNanoseconds(grace));
    server_->Wait();
  }
  // After the server: no batch changes a job now. Before the writer: a
  // refresh stores what it made.
  if (refresher_) refresher_->Shutdown();
  writer_->Shutdown();
}

}  // namespace meridian
