// Collector: the meridian-collector server, assembled: the Ingest, Clock and
// Query services on one gRPC port, over one store file, with one
// BatchWriter. The binary, the integration tests and the benchmark all start
// it this way.
//
// gRPC's threads are capped (a ResourceQuota of 2 per ingest stream allowed,
// plus 64 for queries and control): calls beyond the cap are refused with
// RESOURCE_EXHAUSTED rather than starting a thread each.
//
// Security (docs/security.md): TLS from `tls_cert`/`tls_key` (mutual with
// `tls_ca`), tokens from `auth_tokens`; Start refuses an address beyond
// loopback without TLS and tokens unless `insecure`. The web page (`http`)
// asks the Query service over the in-process channel with the browser's
// token: Start refuses it where clients are known by certificate alone
// (`tls_ca` without tokens), which a browser's request cannot carry.
//
// Shutdown(): stops accepting calls, lets calls in flight finish for up to
// `grace` (then cancels them), commits every batch already received, and
// closes the store. Batches cancelled before their ack are resent by agents
// and then acknowledged as duplicates or stored: nothing is lost.
#ifndef MERIDIAN_COLLECTOR_COLLECTOR_H_
#define MERIDIAN_COLLECTOR_COLLECTOR_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collector/activity_board.h"
#include "collector/authorizer.h"
#include "collector/batch_writer.h"
#include "collector/clock_service.h"
#include "collector/control_service.h"
#include "collector/ingest_service.h"
#include "collector/job_refresher.h"
#include "collector/stall_watch.h"
#include "grpcpp/grpcpp.h"
#include "net/metrics_endpoint.h"
#include "query/clocks/evidence_log.h"
#include "query/query_service.h"
#include "web/web_server.h"

namespace meridian {

struct CollectorOptions {
  std::string listen = "127.0.0.1:7070";  // port 0: pick a free port
  std::string db_path = "meridian.db";
  bool full_sync = true;
  // Larger messages received are refused by gRPC with RESOURCE_EXHAUSTED
  // (replies may be larger: up to net/client_channel.h's
  // kCliMaxReplyBytes).
  // A parsed batch costs up to some 20 times its size (a message of empty
  // strings), so this with ingest.max_streams bounds the parsing memory.
  int max_message_bytes = 16 << 20;
  // Bytes an analysis of a whole job may take, and all the queries running
  // at once together (QueryService).
  uint64_t analysis_memory_bytes = uint64_t{4} << 30;
  // How long a query waits for room in that before it is refused.
  absl::Duration analysis_wait = absl::Seconds(10);
  // Bytes of batches waiting for the writer (BatchWriter); beyond them,
  // streams are told to retry (IngestService).
  size_t max_queue_bytes = 256 << 20;
  IngestLimits ingest;
  // TLS: the collector's certificate and key (PEM files); with `tls_ca`,
  // clients must present a certificate that CA signed (mutual TLS).
  std::string tls_cert, tls_key, tls_ca;
  // Tokens and their scopes (collector/authorizer.h); empty: none needed.
  std::string auth_tokens;
  // Listening on an address other than loopback is refused without TLS
  // (and without tokens) unless this is set.
  bool insecure = false;
  // Prometheus metrics on http://ADDRESS/metrics (docs/operations.md);
  // empty: none.
  std::string metrics;
  // The web page and its JSON on http://ADDRESS/ (web/web_server.h,
  // docs/web.md); empty: none. Beyond loopback only with `insecure`.
  std::string http;
  // Where the page's "Open in Perfetto" goes (WebServerOptions).
  std::string perfetto_ui = "https://ui.perfetto.dev";
  // Jobs whose last span ended more than this many days ago are deleted,
  // at start and then every hour; 0: kept for ever.
  int retention_days = 0;
  // Background refresh (collector/job_refresher.h, docs/operations.md): a
  // job's clocks are solved and its step summaries made once no batch of it
  // has arrived for `refresh_after`; a job still running has its summaries
  // made every `summarise_every`. Zero: not done in the background (the
  // first query that needs them does it).
  absl::Duration refresh_after = absl::Seconds(5);
  absl::Duration summarise_every = absl::Seconds(30);
  // Health (collector/stall_watch.h, docs/health.md): a job on the activity
  // board with no rank leaving a traced call for `stall_after` is stalled:
  // meridian_job_stalled_seconds{job}, and `on_stall` run once (empty:
  // none).
  absl::Duration stall_after = absl::Seconds(60);
  std::string on_stall;
  // Run once for each new slowdown of a running job (docs/health.md,
  // "Slowdowns"; empty: none).
  std::string on_slowdown;
};

class Collector {
 public:
  // Fails if the store cannot be opened or the address cannot be bound, with
  // a message naming which.
  static absl::StatusOr<std::unique_ptr<Collector>> Start(
      const CollectorOptions& options);
  ~Collector();

  // HOST:PORT actually bound (the port resolved when 0 was asked for).
  const std::string& address() const { return address_; }
  int port() const { return port_; }
  // The metrics endpoint's port; 0 without one.
  int metrics_port() const { return metrics_ ? metrics_->port() : 0; }
  // The web page's port; 0 without one.
  int http_port() const { return web_ ? web_->port() : 0; }
  const IngestCounters& counters() const { return ingest_->counters(); }
  // What the queries hold of --analysis-memory-mib (also in its metrics).
  AnalysisMemory::Counters analysis_memory() const;
  // Waits until the background refresh has nothing waiting or running, or
  // `timeout`; true if so (at once without a refresher). Tests, benchmarks.
  bool WaitRefreshed(absl::Duration timeout) {
    return !refresher_ || refresher_->WaitIdle(timeout);
  }
  // Until `n` refreshes have ended since start (false: `timeout` first, or
  // no refresher).
  bool WaitRefreshes(int64_t n, absl::Duration timeout) {
    return refresher_ && refresher_->WaitEnded(n, timeout);
  }

  void Shutdown(absl::Duration grace = absl::Seconds(5));

 private:
  Collector() = default;
  std::vector<prometheus::MetricFamily> CollectMetrics() const;

  // The clock evidence of what the writer stores (evidence_log.h): before
  // the writer and the query service, which use it, so it outlives both.
  std::unique_ptr<EvidenceLog> evidence_log_;
  std::unique_ptr<BatchWriter> writer_;
  std::unique_ptr<IngestService> ingest_;
  std::unique_ptr<ClockService> clock_;
  // What the agents' processes are in (docs/health.md): fed by control_,
  // read by query_.
  ActivityBoard board_;
  SlowdownWatch slowdowns_;  // of the steps agents report with activity
  std::unique_ptr<StallWatch> stall_watch_;  // reads board_
  std::unique_ptr<ControlService> control_;
  std::unique_ptr<QueryService> query_;
  std::unique_ptr<JobRefresher> refresher_;
  std::shared_ptr<const Authorizer> auth_;
  std::unique_ptr<MetricsEndpoint> metrics_;
  std::unique_ptr<WebServer> web_;
  // Retention: deletes old jobs every hour until Shutdown.
  void RetentionLoop(int days);
  absl::Status DeleteOldJobs(int days);
  // Start's steps, in order after the store, writer and services: the query
  // service with its stores of results, the background refresher (with
  // --refresh-after-ms), then the gRPC server, metrics and web page.
  void StartQuery(const CollectorOptions& options,
                  std::shared_ptr<const Authorizer> auth);
  absl::Status StartRefresher(const CollectorOptions& options);
  absl::Status Serve(const CollectorOptions& options,
                     std::shared_ptr<grpc::ServerCredentials> credentials);
  absl::Mutex retention_mu_;
  bool retention_stop_ ABSL_GUARDED_BY(retention_mu_) = false;
  std::thread retention_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_COLLECTOR_H_
