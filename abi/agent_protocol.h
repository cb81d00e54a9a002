// The messages between a node agent and the processes on its node, over
// the agent's Unix socket (SOCK_SEQPACKET: one message per send, and the
// agent sees a process's exit as the end of its connection).
//
//   probe -> agent   ProbeHello + the region's memfd (SCM_RIGHTS), once per
//                    connection; ProbeIdentity when MPI_Init learns the rank.
//   client -> agent  FlushRequest (`meridian-agent --flush`), or
//                    JobFlushRequest (`meridian run` after its command
//                    exits: its job's counters); the agent answers
//                    FlushReply. A zero timeout only asks for the counters
//                    (`meridian-agent --status`).
//   client -> agent  TraceRequest (`meridian trace`): record a step window.
//
// Plain structs of fixed size: the probe side uses no allocation.
#ifndef MERIDIAN_ABI_AGENT_PROTOCOL_H_
#define MERIDIAN_ABI_AGENT_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "abi/agent_dir.h"

namespace meridian {

constexpr uint32_t kAgentProtocolVersion = 2;

enum class AgentMessage : uint32_t {
  kProbeHello = 1,
  kProbeIdentity = 2,
  kFlushRequest = 3,
  kFlushReply = 4,
  kTraceRequest = 5,
  kTraceReply = 6,
  kLauncherHello = 7,
  kDrainSoon = 8,
  kJobFlushRequest = 9,
};

struct ProbeHello {
  AgentMessage type = AgentMessage::kProbeHello;
  uint32_t version = kAgentProtocolVersion;
  int64_t pid = 0;
  int32_t rank = -1;  // -1: not known yet (a ProbeIdentity follows)
  int32_t local_rank = -1;
  uint64_t region_bytes = 0;
  char job[256] = {};
  int32_t world_size = 0;  // 0: not known yet
  uint32_t reserved = 0;
};

struct ProbeIdentity {
  AgentMessage type = AgentMessage::kProbeIdentity;
  int32_t rank = -1;
  int32_t local_rank = -1;
  int32_t world_size = 0;
};

// `meridian run` says this first and then nothing until its FlushRequest
// when the job ends: its connection, held while the job runs, keeps an
// --exit-when-idle agent up and is not closed as silent
// (--idle-timeout-ms), however long the job runs.
struct LauncherHello {
  AgentMessage type = AgentMessage::kLauncherHello;
  uint32_t version = kAgentProtocolVersion;
  int64_t pid = 0;
};

// A probe says a ring of its is half full: the agent reads its rings now
// rather than at its next period (which may be --max-drain-ms away when
// the process recorded little until then). Sent without waiting; a lost
// one costs only the wait.
struct DrainSoon {
  AgentMessage type = AgentMessage::kDrainSoon;
  uint32_t reserved = 0;
};

struct FlushRequest {
  AgentMessage type = AgentMessage::kFlushRequest;
  uint32_t timeout_ms = 0;
  // 0: answer kSpooled as soon as the collector is found unreachable.
  // 1: keep waiting for it until the timeout (`meridian-agent --flush`).
  uint32_t wait_for_collector = 0;
  uint32_t reserved = 0;
};

// `meridian run`'s flush when its command exits: a FlushRequest for its
// job. The FlushReply's state is the agent's delivery as for a
// FlushRequest; its counters and invalid processes are the job's only
// (NodeAgent::CountersOf), not other processes' on a shared agent.
struct JobFlushRequest {
  AgentMessage type = AgentMessage::kJobFlushRequest;
  uint32_t timeout_ms = 0;
  uint32_t wait_for_collector = 0;
  uint32_t reserved = 0;
  char job[256] = {};
};

// The agent's counters since it started.
struct AgentCounters {
  uint64_t processes = 0;       // registrations accepted
  uint64_t spans_received = 0;  // records read from rings
  uint64_t spans_sent = 0;      // acknowledged by the collector
  uint64_t spans_spooled = 0;   // on disk, not yet acknowledged
  uint64_t spool_writes = 0;    // batches written to the spool, ever
  uint64_t spans_dropped = 0;  // rings full, threads without a ring, spool full
  uint64_t spans_rejected = 0;  // the collector refused their batch
  // Records dropped one by one as invalid (wire/span_rules.h), by this
  // agent or by the collector; the rest of their batch travels on.
  uint64_t spans_invalid = 0;
  // Spool files found cut short or changed (CRC-32C) and set aside: their
  // spans are lost, and said so here rather than counted as delivered.
  uint64_t spool_corrupt = 0;
  // Connections closed unserved: another user's process, over
  // --max-connections, or out of file descriptors.
  uint64_t connections_refused = 0;
  // Records whose ring slots were released once read, before the
  // collector acknowledged them, because their ring was over half full
  // (NodeAgent::Drain): only in the agent's memory until acknowledged.
  uint64_t released_early = 0;
};

// A process some of whose records the agent dropped as invalid
// (wire/span_rules.h), for `meridian-agent --status`.
struct InvalidProcess {
  int64_t pid = 0;
  uint64_t records = 0;  // dropped as invalid
  char job[64] = {};
  char first[192] = {};  // the first one's record number and reason
};

struct FlushReply {
  enum State : uint32_t {
    kDelivered = 0,  // everything read so far is acknowledged
    kSpooled = 1,    // the collector is unreachable: the rest is on disk
    kTimedOut = 2,   // still sending when the timeout ran out (on disk)
  };
  AgentMessage type = AgentMessage::kFlushReply;
  State state = kDelivered;
  AgentCounters counters;
  char collector[128] = {};
  char spool[256] = {};
  // Processes with invalid records: those still running, then those that
  // ended, the latest first; at most kInvalidProcesses of them.
  static constexpr uint32_t kInvalidProcesses = 8;
  uint32_t invalid_processes = 0;  // entries of `invalid` that are set
  InvalidProcess invalid[kInvalidProcesses];
};

// Ask the processes of `job` on this node to record steps
// [first_step, first_step + steps) from the next step on, or every event for
// `seconds` seconds.
struct TraceRequest {
  AgentMessage type = AgentMessage::kTraceRequest;
  uint32_t steps = 0;
  uint32_t seconds = 0;
  uint32_t reserved = 0;
  char job[256] = {};
};

struct TraceReply {
  AgentMessage type = AgentMessage::kTraceReply;
  uint32_t processes = 0;  // how many processes were told
};

// Copies `s` into a fixed field, truncating, always NUL-terminated.
void CopyField(const char* s, char* field, size_t size);

// Connects a SOCK_SEQPACKET socket to `path`; returns the fd or -1 (errno).
// EACCES: the socket is served by another user than this process's or
// root (agent_dir.h); nothing was sent to it.
int ConnectAgent(const char* path);

// Sends one message, with `fd` attached if fd >= 0. False on error.
bool SendMessage(int socket, const void* message, size_t bytes, int fd);

// Receives one message of at most `max` bytes into `message`; if `fd` is
// not null, stores an attached descriptor there (or -1). Returns the bytes
// received, 0 at the end of the connection, -1 on error.
long ReceiveMessage(int socket, void* message, size_t max, int* fd);

// What the agent accepts from a client, checked once: a known type of
// exactly its size, a hello (probe's or launcher's) of this protocol version,
// text fields ending within their arrays. The bytes come from another process.
struct AgentRequest {
  AgentMessage type;
  ProbeHello hello;  // the one the type says is set
  ProbeIdentity identity;
  LauncherHello launcher;
  FlushRequest flush;
  JobFlushRequest job_flush;
  TraceRequest trace;
};
// False if the `size` bytes at `data` are no such message.
bool DecodeAgentRequest(const void* data, size_t size, AgentRequest* out);

}  // namespace meridian

#endif  // MERIDIAN_ABI_AGENT_PROTOCOL_H_
