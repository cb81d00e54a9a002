#include "collector/collector_usage.h"

namespace meridian {

const char kCollectorUsage[] =
    R"(usage: meridian-collector [--listen HOST:PORT] [--store LOCATION | --db PATH]
                          [--sync full|normal]
                          [--max-streams N] [--max-queue-mib N]
                          [--tls-cert FILE --tls-key FILE [--tls-ca FILE]]
                          [--auth-tokens FILE] [--insecure] [--metrics HOST:PORT]
                          [--http HOST:PORT [--perfetto-ui ORIGIN]]
                          [--retention-days N] [--max-batch-mib N]
                          [--analysis-memory-mib N] [--analysis-wait-ms N]
                          [--refresh-after-ms N] [--summarise-every-ms N]
                          [--stall-after S] [--on-stall CMD]
                          [--on-slowdown CMD]
       meridian-collector --migrate-from PATH --store LOCATION
       meridian-collector --create-store --store LOCATION
       meridian-collector --version | -h | --help

  --listen HOST:PORT  where agents and the CLI connect (default 127.0.0.1:7070;
                      port 0 picks a free port, printed at start)
  --store LOCATION    where spans are stored: a SQLite file, created if
                      missing (default ./meridian.db), or
                      clickhouse://HOST[:PORT][/DATABASE] (docs/clickhouse.md;
                      user and password from MERIDIAN_CLICKHOUSE_CREDENTIALS,
                      a mode-0600 file holding USER:PASSWORD, or
                      MERIDIAN_CLICKHOUSE_USER and MERIDIAN_CLICKHOUSE_PASSWORD)
  --db PATH           the same as --store PATH (a SQLite file)
  --migrate-from PATH copy every job of the store at PATH (a SQLite file, or
                      any location) into --store, then exit; run again, it
                      stores nothing twice (docs/clickhouse.md)
  --create-store      create --store (its database and tables) and exit: a
                      ClickHouse cluster's shards, before the Distributed
                      tables over them (docs/clickhouse.md)
  --sync full|normal  full (default): an acknowledged batch survives power
                      loss; normal: it survives a crash of the collector
  --tls-cert FILE     TLS: the collector's certificate and key (PEM)
  --tls-key FILE
  --tls-ca FILE       mutual TLS: clients must present a certificate this CA
                      signed
  --auth-tokens FILE  tokens and the jobs each may read, write or trace
                      (docs/security.md); the file must be mode 0600
  --insecure          allow listening beyond loopback without TLS and tokens
                      (only where every client is trusted)
  --metrics HOST:PORT Prometheus metrics on http://HOST:PORT/metrics (spans,
                      batches, queue, commit latency, per-job rates); keep it
                      on loopback or a monitoring network
  --http HOST:PORT    the web page (jobs, steps, stragglers, critical paths,
                      timelines) and its JSON on http://HOST:PORT/
                      (docs/web.md); loopback only unless --insecure
  --perfetto-ui ORIGIN where the page's "Open in Perfetto" sends a trace
                      (default https://ui.perfetto.dev; a self-hosted UI)
  --retention-days N  delete jobs whose last span ended more than N days ago
                      (at start, then hourly); default: keep every job
  --max-batch-mib N   largest message accepted (default 16); larger ones are
                      refused (RESOURCE_EXHAUSTED)
  --analysis-memory-mib N
                      memory an analysis of a whole job may take (default
                      4096, about 190 bytes a span); larger jobs are refused
                      with a message (analyse a step instead). All the
                      queries running at once share it: one that does not
                      fit waits for room, then is refused with retry advice
  --analysis-wait-ms N
                      how long a query waits for room in that (default
                      10000; 0: refused at once)
  --refresh-after-ms N
                      once no batch of a job has come for N ms, or at once
                      when its agents say every process of it has ended,
                      solve its clocks and make its step summaries in the
                      background, so queries read them (default 5000; 0:
                      the first query does it)
  --summarise-every-ms N
                      a job still running has its new steps summarised every
                      N ms (default 30000; 0: only once it goes quiet)
  --stall-after S     a running job none of whose ranks has left a traced
                      call for S seconds, one waiting in a call, is stalled:
                      meridian_job_stalled_seconds{job} (default 60;
                      docs/health.md)
  --on-stall CMD      run `sh -c CMD` once when a job stalls, with
                      MERIDIAN_JOB set and the JSON `meridian health`
                      prints on its stdin
  --on-slowdown CMD   run `sh -c CMD` once for each new slowdown of a
                      running job's rank, the same way (its slowdowns in
                      the JSON)
  --max-streams N     agents' ingest streams served at once (default 256);
                      more are told to retry later (RESOURCE_EXHAUSTED)
  --max-queue-mib N   batches waiting to be committed, in MiB (default 256);
                      beyond it, streams are told to retry later
SIGTERM or SIGINT: finish what is in flight, commit it, and exit 0.
)";

const std::vector<std::string>& CollectorValueFlags() {
  static const auto* flags = new std::vector<std::string>{"listen",
                                                          "db",
                                                          "store",
                                                          "migrate-from",
                                                          "sync",
                                                          "max-streams",
                                                          "max-queue-mib",
                                                          "tls-cert",
                                                          "tls-key",
                                                          "tls-ca",
                                                          "auth-tokens",
                                                          "metrics",
                                                          "http",
                                                          "perfetto-ui",
                                                          "retention-days",
                                                          "max-batch-mib",
                                                          "analysis-memory-mib",
                                                          "analysis-wait-ms",
                                                          "refresh-after-ms",
                                                          "stall-after",
                                                          "on-stall",
                                                          "on-slowdown",
                                                          "summarise-every-ms"};
  return *flags;
}

const std::vector<std::string>& CollectorSwitches() {
  static const auto* flags = new std::vector<std::string>{
      "help", "insecure", "version", "create-store"};
  return *flags;
}

}  // namespace meridian
