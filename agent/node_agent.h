// NodeAgent: meridian-agent, one per node. Stages, in the order a span
// passes them:
//
//   socket    accepts probe registrations (ProbeHello + memfd) and control
//             requests (flush, trace) on a Unix socket; job-wide trace
//             orders come from the collector (TraceRelay)
//   drain     reads every process's rings into batches of span chunks
//             (ProbeSession), at a period that adapts to the rings' fill
//             (drain_ms..max_drain_ms), and at once when a process exits
//             or says a ring of its is half full (DrainSoon)
//   send      delivers batches to the collector (BatchSender). While it
//             acknowledges within `ack_window` batches, a batch is only in
//             memory and its records stay in the rings, released on the
//             ack: no disk is touched
//   spool     what the window cannot hold, what an unreachable collector
//             leaves, and what is undelivered at stop are written to disk
//             (Spool), and their records released; resent later
//
// Durability (docs/agent.md): an agent killed at any moment loses nothing
// of a live process: unacknowledged records are still in its rings, and the
// collector's ring marks drop those it had stored. Records of a process
// that has already exited are only in the agent's memory until
// acknowledged: a kill then loses them (at most ack_window batches).
//
// One agent per socket: Start takes an exclusive lock on SOCKET.lock, so a
// second agent for the same socket fails with ALREADY_EXISTS and a stale
// socket file left by a killed agent is replaced.
//
// Counters (processes, spans received, sent, spooled, dropped, rejected)
// are answered to flush requests (`meridian run`, `meridian-agent --status`)
// and logged when the agent stops.
#ifndef MERIDIAN_AGENT_NODE_AGENT_H_
#define MERIDIAN_AGENT_NODE_AGENT_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "abi/agent_protocol.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/agent_metrics.h"
#include "agent/batch_sender.h"
#include "agent/clock_sync.h"
#include "agent/node_counters.h"
#include "agent/node_time_map.h"
#include "agent/probe_session.h"
#include "agent/spool.h"
#include "agent/stack_reader.h"
#include "agent/trace_relay.h"
#include "net/client_channel.h"
#include "net/metrics_endpoint.h"
#include "wire/batch_builder.h"

namespace meridian {

struct NodeAgentOptions {
  std::string collector;  // HOST:PORT
  // TLS and token for the collector (net/client_channel.h).
  ClientSecurity security;
  std::string socket;
  std::string spool_dir;
  std::string node;  // host name by default
  uint64_t spool_max_bytes = 1ULL << 30;
  int drain_ms = 20;       // shortest drain period
  int max_drain_ms = 500;  // longest, when the rings fill slowly
  // Batches sent and not yet acknowledged that may exist in memory only;
  // beyond that, batches go to the spool first.
  uint64_t ack_window = 16;
  // A round of batches on which the collector acknowledges nothing for
  // this long is given up: the collector counts as unreachable and the
  // batches go to the spool (BatchSender).
  int ack_timeout_ms = 10000;
  size_t max_batch_spans = 16384;
  // This node's clock against the collector's: a burst of probes every
  // clock_sync_ms. The skew is a test option (ClockSync).
  int clock_sync_ms = 2000;
  ClockSkew clock_skew;
  // How often to ask the collector for job-wide `meridian trace` orders
  // (TraceRelay).
  int control_poll_ms = 1000;
  // A thread in the same traced call (or in none) this long has its native
  // stack read once (agent/thread_stacks.h) and reported with the
  // activity (docs/health.md); 0: never.
  int stack_after_ms = 10000;
  // The node's counters (agent/node_counters.h) are sampled this often, as
  // counter spans in each job on the node and for the collector's
  // slowdown reports (docs/agent.md, "Node counters"); 0: never.
  int node_counters_ms = 1000;
  // Exit once every client has gone and nothing is left to send (or the
  // collector is unreachable: the spool keeps it). For agents `meridian run`
  // starts for itself.
  bool exit_when_idle = false;
  // For an agent run as root: the group whose processes it also serves
  // (its directory is then 0750 and its socket 0660, of that group); -1:
  // only its own user's and root's (docs/security.md).
  gid_t shared_gid = static_cast<gid_t>(-1);
  // Connections served at once; more are accepted and closed at once, so
  // that idle ones cannot starve the processes being traced.
  size_t max_connections = 128;
  // Of them, the most one user other than the agent's own and root may
  // hold (the members of `shared_gid`): one member's connections, which a
  // launcher's hello keeps open however long, cannot take every place from
  // the others. 0: half of max_connections (at least 1).
  size_t max_connections_per_user = 0;
  // A connection that has sent nothing this long after it was accepted is
  // closed (and counted refused): a probe says hello, and a client its
  // request, at once, so a silent one only holds a place.
  int idle_timeout_ms = 10000;
  // Prometheus metrics on http://ADDRESS/metrics (docs/operations.md);
  // empty: none.
  std::string metrics;
};

class NodeAgent {
 public:
  // How long a stopping agent waits for acknowledgements (docs/agent.md).
  static constexpr int kStopGraceMs = 2000;

  static absl::StatusOr<std::unique_ptr<NodeAgent>> Start(
      NodeAgentOptions options);
  ~NodeAgent();

  // Serves until Stop() (or SIGTERM/SIGINT, or idle when exit_when_idle),
  // then drains every ring, waits up to kStopGraceMs for the collector's
  // acknowledgements, cancels what is still sent and spools it. Returns
  // the final counters. No call to the collector outlasts the grace, so a
  // collector that never answers delays the stop by the grace alone.
  AgentCounters Run();
  // Thread-safe and async-signal-safe.
  void Stop();

  AgentCounters counters() const;
  // The metrics endpoint's port; 0 without one.
  int metrics_port() const { return metrics_ ? metrics_->port() : 0; }
  const std::string& agent_id() const { return agent_id_; }

 private:
  struct Client {
    int fd;
    std::unique_ptr<ProbeSession> session;  // a traced process, or null
    int64_t silent_until_ms = 0;  // closed if still silent then; 0: it spoke
    uid_t uid = 0;                // its peer's
  };
  // A `meridian trace --local` request to answer on `fd`.
  struct LocalTrace {
    int fd;
    std::string job;
    uint32_t steps;
    uint32_t seconds;
  };
  struct PendingFlush {
    int fd;
    int64_t deadline_ms;
    bool wait_for_collector;
    // A JobFlushRequest's job: the reply's counters are that job's.
    std::optional<std::string> job;
  };

  explicit NodeAgent(NodeAgentOptions options);
  // The socket stage (node_agent_sockets.cc).
  absl::Status Listen();
  // Listen's part once no other agent is starting on the socket.
  absl::Status ListenLocked(const std::string& path, const std::string& name);
  void Accept();
  // Out of descriptors: frees the reserve to accept and close one waiting
  // connection, so the listening socket stops reporting it.
  void ShedOne();
  void Refuse(int fd, const char* why, uid_t uid, pid_t pid);
  // False when the client is gone.
  bool Serve(Client* client);
  // Closes the connections of `fds`, whose processes ended (or went
  // away): one drain takes what all of them recorded, so processes that end
  // together (a job's ranks) cost one batch, and one spool write while the
  // collector is slow, rather than one each.
  void Close(const std::vector<int>& fds);
  // Closes the connections silent past options_.idle_timeout_ms.
  void CloseSilent();
  // Takes in the connections and messages already queued on the socket, so
  // that what follows covers every process that registered before it.
  void TakeInQueued();
  // Applies the relay's orders and the local trace requests.
  void ApplyTraces();
  // Makes this node's processes of `job` (all, if empty) record; returns
  // how many.
  uint32_t Trace(const std::string& job, uint32_t steps, uint32_t seconds);
  // Reads every session's rings into batches and sends them; returns the
  // largest fraction of a ring read (for the drain period). `ending`:
  // sessions whose processes exited, marked ended (v1::Process.ended) in
  // the last batch once every ring was read empty.
  double Drain(const std::vector<ProbeSession*>& ending = {});
  // Extends the time map; logs a step of the node's clock.
  void UpdateTimeMap();
  // Samples what every traced process is in, for the relay's next poll
  // (docs/health.md).
  void SampleActivity();
  // Samples the node's counters: into the relay's next poll, and into
  // pending_counters_ for the trace.
  void SampleNode();
  // Puts the pending samples, as counter spans, into one process (the
  // lowest rank) of each job on the node: with a batch that carries
  // records anyway, or once the oldest has waited kMaxPendingSamples
  // periods, or when `force` (a process ended, the agent stops). So an
  // idle or hung job costs a batch every kMaxPendingSamples seconds, not
  // every second.
  void AddNodeCounters(bool force);
  void SendBatch();
  // Writes the in-memory batches to the spool and releases their records.
  void SpillMemory();
  // Batch `seq` is delivered or spooled: releases ring records in order.
  void Release(uint64_t seq);
  // Takes the sender's deliveries; spills if the collector is unreachable.
  void Reconcile();
  int NextDrainPeriod(int period, double fill) const;
  // How long the loop may wait for events: until the next drain
  // (`next_drain_ms`), a flush's deadline or a silent connection's.
  int WaitMs(int64_t next_drain_ms) const;
  // After the loop: the last drain, the sender's grace to deliver, the rest
  // spooled, the flushes answered; the counters, also logged.
  AgentCounters Finish();
  void AnswerFlushes(bool final);
  // `job` set: the counters and invalid processes of that job only.
  FlushReply MakeReply(FlushReply::State state,
                       const std::optional<std::string>& job) const;
  // Job `job`'s own counters: processes, spans received, dropped (its
  // rings, the spool full), invalid (its records), sent, rejected and
  // spooled (its share of each batch, BatchSender::job), and the agent's
  // spool_corrupt (a damaged file's jobs are not known).
  AgentCounters CountersOf(const std::string& job) const;
  // The tally of `job` (made if new): the kJobCounters jobs counted last
  // (a node's agent serves a few jobs at a time; `meridian run` asks as
  // its job ends).
  AgentCounters& TallyOf(const std::string& job);
  static constexpr size_t kJobCounters = 64;

  NodeAgentOptions options_;
  std::string agent_id_;
  int dir_fd_ = -1;      // the socket's directory, verified private
  int reserve_fd_ = -1;  // spare descriptor for ShedOne
  int lock_fd_ = -1;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop() and sender progress
  int signal_fd_ = -1;
  std::atomic<bool> stopping_{false};
  bool had_clients_ = false;
  std::map<int, Client> clients_;
  std::vector<PendingFlush> flushes_;
  bool drain_soon_ = false;  // a probe said a ring is half full
  std::vector<LocalTrace> local_traces_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<BatchSender> sender_;
  std::unique_ptr<ClockSync> clock_sync_;
  std::unique_ptr<TraceRelay> relay_;
  BatchBuilder builder_;
  std::vector<ProbeSession*> in_batch_;  // sessions read into it
  // Batches whose records are not yet released, in order: the ring
  // positions each ends at, and whether it is delivered or spooled.
  struct Pending {
    uint64_t seq = 0;
    std::vector<RingPosition> ends;
    bool done = false;
  };
  std::deque<Pending> pending_;
  // Probe times to the node's clock (ClockSync::Now): one map, extended at
  // each drain, whichever drain reads a record.
  std::unique_ptr<NodeTimeMap> time_;
  int64_t next_sample_ms_ = 0;  // SampleActivity's, every control_poll_ms
  std::unique_ptr<NodeCounterReader> node_counters_;  // null: not sampled
  int64_t next_counters_ms_ = 0;                      // SampleNode's
  int64_t last_counters_ns_ = 0;  // the node clock at its last sample
  struct PendingCounters {
    int64_t ns;
    std::vector<NodeCounter> counters;
  };
  static constexpr size_t kMaxPendingSamples = 10;
  std::deque<PendingCounters> pending_counters_;
  // Stuck threads' stacks, read on a thread of their own (null:
  // --stack-after-ms 0).
  std::unique_ptr<StackReader> stacks_;
  // Adds the stacks of `process`'s threads stuck past stack_after_ms,
  // noting each thread in `alive`.
  void AddStacks(v1::ProcessActivity* process,
                 std::set<StackReader::Thread>* alive);
  // Names MPI call sites for every session (one cache for the node's
  // processes, which share their programs' objects).
  CallsiteSymbolizer symbolizer_;
  AgentCounters counters_;
  struct JobTally {
    AgentCounters counters;
    uint64_t used = 0;  // tally_clock_ when last counted
  };
  std::map<std::string, JobTally> job_tallies_;
  uint64_t tally_clock_ = 0;
  uint64_t dropped_by_closed_sessions_ = 0;
  // Ended processes that had invalid records, the latest first (at most
  // FlushReply::kInvalidProcesses).
  std::deque<InvalidProcess> ended_invalid_;
  // Processes with invalid records, running then ended, for --status and
  // the metrics.
  std::vector<InvalidProcess> InvalidProcesses() const;
  static InvalidProcess InvalidOf(const ProbeSession& session);
  // What the metrics endpoint serves (agent_metrics.h), copied by the loop
  // (Publish) so the endpoint's thread reads nothing the loop owns.
  using Published = AgentSnapshot;
  void Publish();
  std::vector<prometheus::MetricFamily> CollectMetrics() const;
  mutable absl::Mutex published_mu_;
  Published published_ ABSL_GUARDED_BY(published_mu_);
  std::unique_ptr<MetricsEndpoint> metrics_;
  uint64_t invalid_by_closed_sessions_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_NODE_AGENT_H_
