// meridian-agent: the node agent (one per node). See docs/agent.md.
#include <grp.h>
#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "agent/agent_usage.h"
#include "agent/node_agent.h"
#include "common/command_line.h"
#include "common/version.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace {

int Usage(const std::string& error) {
  fprintf(stderr, "meridian-agent: %s\n\n%s", error.c_str(),
          meridian::kAgentUsage);
  return 2;
}

const char* Env(const char* name) {
  const char* value = getenv(name);
  return value == nullptr ? "" : value;
}

int Status(const std::string& socket, int timeout_ms) {
  int fd = meridian::ConnectAgent(socket.c_str());
  if (fd < 0) {
    fprintf(stderr, "meridian-agent: no agent answers on %s: %s\n",
            socket.c_str(), strerror(errno));
    return 1;
  }
  meridian::FlushRequest request;  // timeout 0: only the counters
  request.timeout_ms = timeout_ms;
  request.wait_for_collector = 1;
  meridian::FlushReply reply;
  if (!meridian::SendMessage(fd, &request, sizeof(request), -1) ||
      meridian::ReceiveMessage(fd, &reply, sizeof(reply), nullptr) !=
          static_cast<long>(sizeof(reply))) {
    fprintf(stderr, "meridian-agent: the agent on %s did not answer\n",
            socket.c_str());
    return 1;
  }
  const meridian::AgentCounters& c = reply.counters;
  const char* state =
      reply.state == meridian::FlushReply::kDelivered ? "delivered"
      : reply.state == meridian::FlushReply::kSpooled ? "spooled"
                                                      : "sending";
  printf(
      "state %s\ncollector %s\nspool %s\nprocesses %llu\nreceived %llu\nsent "
      "%llu\n"
      "spooled %llu\nspool writes %llu\ndropped %llu\nrejected %llu\n"
      "invalid %llu\nspool files corrupt %llu\nconnections refused %llu\n"
      "released before ack %llu\n",
      state, reply.collector, reply.spool, (unsigned long long)c.processes,
      (unsigned long long)c.spans_received, (unsigned long long)c.spans_sent,
      (unsigned long long)c.spans_spooled, (unsigned long long)c.spool_writes,
      (unsigned long long)c.spans_dropped, (unsigned long long)c.spans_rejected,
      (unsigned long long)c.spans_invalid, (unsigned long long)c.spool_corrupt,
      (unsigned long long)c.connections_refused,
      (unsigned long long)c.released_early);
  for (uint32_t i = 0;
       i < reply.invalid_processes && i < reply.kInvalidProcesses; ++i) {
    const meridian::InvalidProcess& p = reply.invalid[i];
    printf("invalid in process %lld (job %.*s) %llu; the first: %.*s\n",
           (long long)p.pid, (int)strnlen(p.job, sizeof(p.job)), p.job,
           (unsigned long long)p.records,
           (int)strnlen(p.first, sizeof(p.first)), p.first);
  }
  return timeout_ms == 0 || reply.state == meridian::FlushReply::kDelivered ? 0
                                                                            : 1;
}

// The spool's and the sending's flags into `options`: an error, or empty.
std::string ParseSending(const meridian::CommandLine& flags,
                         meridian::NodeAgentOptions* options) {
  auto max_bytes = flags.GetInt("spool-max-bytes", 1LL << 30);
  auto drain_ms = flags.GetInt("drain-ms", 20);
  if (!max_bytes.ok()) return std::string(max_bytes.status().message());
  if (!drain_ms.ok()) return std::string(drain_ms.status().message());
  if (*max_bytes <= 0 || *drain_ms <= 0 || *drain_ms > 60000) {
    return "--spool-max-bytes and --drain-ms must be positive";
  }
  options->spool_max_bytes = *max_bytes;
  options->drain_ms = static_cast<int>(*drain_ms);
  auto max_drain_ms = flags.GetInt("max-drain-ms", 500);
  if (!max_drain_ms.ok() || *max_drain_ms < *drain_ms ||
      *max_drain_ms > 60000) {
    return "--max-drain-ms must be milliseconds, --drain-ms to 60000";
  }
  options->max_drain_ms = static_cast<int>(*max_drain_ms);
  auto ack_window = flags.GetInt("ack-window", 16);
  if (!ack_window.ok() || *ack_window < 0 || *ack_window > 4096) {
    return "--ack-window must be 0 to 4096 batches";
  }
  options->ack_window = static_cast<uint64_t>(*ack_window);
  auto ack_timeout = flags.GetInt("ack-timeout-ms", 10000);
  if (!ack_timeout.ok() || *ack_timeout < 1 || *ack_timeout > 3600000) {
    return "--ack-timeout-ms must be 1 to 3600000";
  }
  options->ack_timeout_ms = static_cast<int>(*ack_timeout);
  return "";
}

// --nice and --sched-batch, applied to this process: nullopt, or the exit
// status of a refusal (2, usage printed) or of a failure (1).
std::optional<int> ApplyPriority(const meridian::CommandLine& flags) {
  auto nice = flags.GetInt("nice", 0);
  if (!nice.ok() || *nice < 0 || *nice > 19) {
    return Usage("--nice must be 0 to 19");
  }
  if (*nice > 0 && setpriority(PRIO_PROCESS, 0, static_cast<int>(*nice)) != 0) {
    fprintf(stderr, "meridian-agent: --nice %lld: %s\n",
            static_cast<long long>(*nice), strerror(errno));
    return 1;
  }
  if (flags.Has("sched-batch")) {
    sched_param param{};
    if (sched_setscheduler(0, SCHED_BATCH, &param) != 0) {
      fprintf(stderr, "meridian-agent: --sched-batch: %s\n", strerror(errno));
      return 1;
    }
  }
  return std::nullopt;
}

// The connections' flags (how many, whose, how long idle): an error, or
// empty.
std::string ParseConnections(const meridian::CommandLine& flags,
                             meridian::NodeAgentOptions* options) {
  auto max_connections = flags.GetInt("max-connections", 128);
  if (!max_connections.ok() || *max_connections < 1 ||
      *max_connections > 65536) {
    return "--max-connections must be 1 to 65536";
  }
  options->max_connections = static_cast<size_t>(*max_connections);
  if (flags.Has("max-connections-per-user")) {  // else the agent's default
    auto per_user = flags.GetInt("max-connections-per-user", 0);
    if (!per_user.ok() || *per_user < 1 || *per_user > *max_connections) {
      return "--max-connections-per-user must be 1 to --max-connections";
    }
    options->max_connections_per_user = static_cast<size_t>(*per_user);
  }
  auto idle_timeout = flags.GetInt("idle-timeout-ms", 10000);
  if (!idle_timeout.ok() || *idle_timeout < 1 || *idle_timeout > 3600000) {
    return "--idle-timeout-ms must be 1 to 3600000";
  }
  options->idle_timeout_ms = static_cast<int>(*idle_timeout);
  if (flags.Has("allow-group")) {
    const std::string group = flags.Get("allow-group");
    const struct group* g = getgrnam(group.c_str());
    int64_t gid = -1;
    if (g != nullptr) {
      gid = g->gr_gid;
    } else if (!absl::SimpleAtoi(group, &gid) || gid < 0 || gid > 0x7fffffff) {
      return "--allow-group " + group + ": no such group";
    }
    if (geteuid() != 0) {
      return "--allow-group is for an agent run as root; an agent of your own "
             "serves only your processes";
    }
    options->shared_gid = static_cast<gid_t>(gid);
  }
  return "";
}

// The clock's flags (sync period, a simulated offset and drift), the
// control poll and the stacks' threshold: an error, or empty.
std::string ParseClock(const meridian::CommandLine& flags,
                       meridian::NodeAgentOptions* options) {
  auto sync_ms = flags.GetInt("clock-sync-ms", 2000);
  auto skew_ns = flags.GetInt("clock-offset-ns", 0);
  if (!sync_ms.ok() || *sync_ms <= 0 || *sync_ms > 3600000) {
    return "--clock-sync-ms must be milliseconds (1 to 3600000)";
  }
  if (!skew_ns.ok() || std::llabs(*skew_ns) > 3600LL * 1000000000) {
    return "--clock-offset-ns must be ns within +-1 hour";
  }
  char* end = nullptr;
  const std::string drift = flags.Get("clock-drift-ppm", "0");
  const double drift_ppm = strtod(drift.c_str(), &end);
  if (end == drift.c_str() || *end != '\0' || !(std::fabs(drift_ppm) <= 1000)) {
    return "--clock-drift-ppm must be a number within +-1000";
  }
  auto poll_ms = flags.GetInt("control-poll-ms", 1000);
  if (!poll_ms.ok() || *poll_ms <= 0 || *poll_ms > 3600000) {
    return "--control-poll-ms must be milliseconds (1 to 3600000)";
  }
  auto stack_ms = flags.GetInt("stack-after-ms", 10000);
  if (!stack_ms.ok() || *stack_ms < 0 || *stack_ms > 86400000) {
    return "--stack-after-ms must be milliseconds (0: never, to 86400000)";
  }
  auto counters_ms = flags.GetInt("node-counters-ms", 1000);
  if (!counters_ms.ok() || *counters_ms < 0 || *counters_ms > 3600000) {
    return "--node-counters-ms must be milliseconds (0: never, to 3600000)";
  }
  options->node_counters_ms = static_cast<int>(*counters_ms);
  options->clock_sync_ms = static_cast<int>(*sync_ms);
  options->control_poll_ms = static_cast<int>(*poll_ms);
  options->stack_after_ms = static_cast<int>(*stack_ms);
  options->clock_skew = {*skew_ns, drift_ppm, meridian::WallNs()};
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  // Debian's Abseil is built without NDEBUG, so its Mutex would check lock
  // order (deadlock detection) on every acquisition: a debugging aid whose
  // cost showed in profiles of both daemons.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  spdlog::set_default_logger(spdlog::stderr_color_mt("meridian-agent"));
  std::vector<std::string> args(argv, argv + argc);
  auto flags = meridian::CommandLine::Parse(
      args, 1, meridian::AgentValueFlags(), meridian::AgentSwitches());
  if (!flags.ok()) return Usage(std::string(flags.status().message()));
  if (flags->Has("version")) {
    printf("meridian-agent %s\n", meridian::kVersion);
    return 0;
  }
  if (flags->Has("help")) {
    printf("%s", meridian::kAgentUsage);
    return 0;
  }
  if (!flags->positional().empty()) {
    return Usage("unexpected argument " + flags->positional()[0]);
  }
  meridian::NodeAgentOptions options;
  options.socket = flags->Get("socket", meridian::DefaultAgentSocket());
  if (flags->Has("status")) return Status(options.socket, 0);
  if (flags->Has("flush")) {
    auto timeout = flags->GetInt("timeout", 60);
    if (!timeout.ok() || *timeout <= 0 || *timeout > 86400) {
      return Usage("--timeout must be seconds (1 to 86400)");
    }
    return Status(options.socket, static_cast<int>(*timeout * 1000));
  }
  options.collector = flags->Get("collector", Env("MERIDIAN_COLLECTOR"));
  if (options.collector.empty()) return Usage("--collector is required");
  options.metrics = flags->Get("metrics", "");
  options.security.tls_ca_file = flags->Get("tls-ca", "");
  options.security.tls_cert_file = flags->Get("tls-cert", "");
  options.security.tls_key_file = flags->Get("tls-key", "");
  if (flags->Has("token-file")) {
    auto token = meridian::ReadTokenFile(flags->Get("token-file"));
    if (!token.ok()) return Usage(std::string(token.status().message()));
    options.security.token = *token;
  }
  if (absl::Status s = meridian::AddSecurityFromEnvironment(&options.security);
      !s.ok()) {
    return Usage(std::string(s.message()));
  }
  std::string default_spool = Env("MERIDIAN_SPOOL");
  if (default_spool.empty()) {
    default_spool = meridian::DirOf(options.socket) + "/spool";
  }
  options.spool_dir = flags->Get("spool", default_spool);
  options.node = flags->Get("node");
  if (std::string e = ParseSending(*flags, &options); !e.empty()) {
    return Usage(e);
  }
  if (std::optional<int> failed = ApplyPriority(*flags)) return *failed;
  options.exit_when_idle = flags->Has("exit-when-idle");
  if (std::string e = ParseConnections(*flags, &options); !e.empty()) {
    return Usage(e);
  }
  if (std::string e = ParseClock(*flags, &options); !e.empty()) {
    return Usage(e);
  }
  auto agent = meridian::NodeAgent::Start(options);
  if (!agent.ok()) {
    fprintf(stderr, "meridian-agent: %s\n",
            std::string(agent.status().message()).c_str());
    return agent.status().code() == absl::StatusCode::kAlreadyExists ? 3 : 1;
  }
  printf("meridian-agent %s serving %s for collector %s, spool %s\n",
         (*agent)->agent_id().c_str(), options.socket.c_str(),
         options.collector.c_str(), options.spool_dir.c_str());
  fflush(stdout);
  (*agent)->Run();
  return 0;
}
