#include "agent/agent_usage.h"

namespace meridian {

const char kAgentUsage[] =
    R"(usage: meridian-agent --collector HOST:PORT [--socket PATH] [--spool DIR]
                      [--node NAME] [--spool-max-bytes N] [--drain-ms N]
                      [--max-drain-ms N] [--ack-window N]
                      [--ack-timeout-ms N] [--nice N]
                      [--sched-batch] [--exit-when-idle] [--clock-sync-ms N]
                      [--control-poll-ms N] [--stack-after-ms N]
                      [--node-counters-ms N] [--max-connections N]
                      [--max-connections-per-user N]
                      [--idle-timeout-ms N] [--allow-group GROUP]
                      [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]
                      [--token-file FILE] [--metrics HOST:PORT]
       meridian-agent --status [--socket PATH]
       meridian-agent --flush [--timeout S] [--socket PATH]
       meridian-agent --version | -h | --help

Serves the traced processes of this node on a Unix socket, reads their
records and streams them to the collector; spools to disk only what the
collector has not acknowledged in time (docs/agent.md: durability).

  --collector        the collector (default $MERIDIAN_COLLECTOR)
  --tls-ca           TLS to the collector: the CA of its certificate
                     (default $MERIDIAN_TLS_CA; none: no TLS)
  --tls-cert         this agent's certificate and key, for a collector that
  --tls-key          requires them (default $MERIDIAN_TLS_CERT, _KEY)
  --metrics          Prometheus metrics on http://HOST:PORT/metrics (spans
                     in/out/dropped, queue, spool bytes)
  --token-file       a file (mode 0600) holding the token the collector
                     asks for (default $MERIDIAN_TOKEN, $MERIDIAN_TOKEN_FILE)
  --socket           default $MERIDIAN_AGENT_SOCKET, else
                     $XDG_RUNTIME_DIR/meridian/agent.sock, else
                     /run/user/UID/meridian/agent.sock, else
                     /tmp/meridian-UID/agent.sock; its directory must be
                     this user's and writable by no other (docs/security.md)
  --max-connections  processes and clients served at once (default 128);
                     more are closed unserved and counted
  --max-connections-per-user
                     of them, the most one user other than the agent's
                     own and root may hold (an --allow-group agent's
                     members; default half of --max-connections)
  --idle-timeout-ms  close a connection that has sent nothing this long
                     after it was accepted (default 10000), and count it
  --allow-group      (an agent run as root) also serve this group's
                     processes: the directory becomes 0750 and the socket
                     0660 of that group
  --spool            batches not yet acknowledged (default $MERIDIAN_SPOOL,
                     else the socket's directory + /spool)
  --node             this node's name (default: the host name)
  --spool-max-bytes  bound of the spool (default 1 GiB); beyond it new spans
                     are dropped and counted
  --drain-ms         shortest period between reads of the rings (default 20)
  --max-drain-ms     longest period, when the rings fill slowly (default 500);
                     the period adapts so a ring fills about a quarter
  --ack-window       batches that may wait for the collector's ack in memory
                     only, their records still in the rings (default 16);
                     beyond that, batches are spooled first
  --ack-timeout-ms   a round of batches the collector acknowledges nothing
                     of for this long is given up and spooled, the
                     collector counted unreachable (default 10000)
  --nice             raise the agent's nice value by N (0..19) so the job's
                     own threads run first on a busy node
  --sched-batch      run the agent under SCHED_BATCH (Linux)
  --exit-when-idle   exit when the last client has gone and all is sent
  --clock-sync-ms    how often the clock is measured against the
                     collector's (default 2000; docs/clocks.md)
  --control-poll-ms  how often the collector is asked for `meridian trace`
                     orders of the jobs on this node, and told what each
                     traced process is in (default 1000; docs/health.md)
  --stack-after-ms   a thread in the same traced call, or in none, this
                     long has its native stack read once, through ptrace
                     (default 10000; 0: never)
  --node-counters-ms how often the node's CPU, memory, NIC, InfiniBand and
                     GPU counters are sampled, as counter spans in each
                     job here and for slowdown reports (default 1000; 0:
                     never; docs/agent.md)
  --clock-offset-ns, --clock-drift-ppm
                     test options: skew this agent's clock by an offset and
                     a drift, to check that the collector corrects them
  --status           print the counters of the agent on the socket
  --flush            read every ring now and wait (default 60 s) until all is
                     acknowledged; exit 0 if it is, 1 if spooled or timed out
)";

const std::vector<std::string>& AgentValueFlags() {
  static const auto* flags = new std::vector<std::string>{
      "collector",       "socket",
      "spool",           "node",
      "spool-max-bytes", "drain-ms",
      "max-drain-ms",    "ack-window",
      "ack-timeout-ms",  "nice",
      "timeout",         "clock-sync-ms",
      "clock-offset-ns", "clock-drift-ppm",
      "control-poll-ms", "stack-after-ms",
      "max-connections", "max-connections-per-user",
      "idle-timeout-ms", "allow-group",
      "tls-ca",          "tls-cert",
      "tls-key",         "token-file",
      "metrics",         "node-counters-ms"};
  return *flags;
}

const std::vector<std::string>& AgentSwitches() {
  static const auto* flags = new std::vector<std::string>{
      "exit-when-idle", "status", "flush", "help", "sched-batch", "version"};
  return *flags;
}

}  // namespace meridian
