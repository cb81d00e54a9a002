#include "cli/run_command.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "abi/agent_protocol.h"
#include "abi/launch_env.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/job_name.h"
#include "common/json.h"
#include "grpcpp/grpcpp.h"
#include "import/paths.h"
#include "meridian/v1/query.grpc.pb.h"
#include "net/client_channel.h"

extern char** environ;

namespace meridian {
namespace {

std::string SelfDir() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  path[n] = '\0';
  return DirOf(path);
}

// The first of $`variable` and `candidates` (relative to this program's
// directory) that exists; empty if none does.
std::string Find(const char* variable,
                 const std::vector<std::string>& candidates) {
  if (const char* set = getenv(variable); set != nullptr && *set) return set;
  const std::string self = SelfDir();
  for (const std::string& candidate : candidates) {
    std::string path = self + "/" + candidate;
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved) != nullptr &&
        access(resolved, R_OK) == 0) {
      return resolved;
    }
  }
  return "";
}

std::string UtcStamp() {
  time_t now = time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  char buffer[32];
  strftime(buffer, sizeof(buffer), "%Y%m%d-%H%M%S", &tm);
  return buffer;
}

// Starts an agent for `socket` that exits when idle; returns once it serves
// (or another agent won the race to serve it). False with a message if it
// could not start.
bool StartAgent(const std::string& agent, const std::string& socket,
                const std::string& collector) {
  const std::string log = DirOf(socket) + "/agent.log";
  std::string error;
  const int dir = OpenPrivateDir(DirOf(socket), static_cast<gid_t>(-1), &error);
  if (dir < 0) {
    fprintf(stderr, "meridian run: %s\n", error.c_str());
    return false;
  }
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    setsid();
    int null = open("/dev/null", O_RDONLY);
    int out = openat(dir, "agent.log",
                     O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
    dup2(null, 0);
    dup2(ready[1], 1);
    dup2(out >= 0 ? out : null, 2);
    execl(agent.c_str(), agent.c_str(), "--collector", collector.c_str(),
          "--socket", socket.c_str(), "--exit-when-idle",
          static_cast<char*>(nullptr));
    fprintf(stderr, "meridian run: cannot execute %s: %s\n", agent.c_str(),
            strerror(errno));
    _exit(127);
  }
  close(ready[1]);
  close(dir);
  // The agent prints one line once it serves; end of file means it exited.
  char line[512];
  ssize_t n;
  do {
    n = read(ready[0], line, sizeof(line));
  } while (n < 0 && errno == EINTR);
  close(ready[0]);
  if (n > 0) return true;
  int status = 0;
  waitpid(pid, &status, 0);
  // Exit 3: another agent serves the socket (a rank beside us started it).
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return true;
  fprintf(stderr, "meridian run: the agent did not start; see %s\n",
          log.c_str());
  return false;
}

// Connects to the node's agent, starting one if none answers.
int ConnectOrStartAgent(const std::string& socket,
                        const std::string& collector) {
  int fd = ConnectAgent(socket.c_str());
  if (fd >= 0) return fd;
  if (errno == EACCES) {
    fprintf(stderr,
            "meridian run: %s is served by another user: refusing it "
            "(docs/security.md); use a private directory (--socket, "
            "MERIDIAN_AGENT_SOCKET or XDG_RUNTIME_DIR)\n",
            socket.c_str());
    return -1;
  }
  const std::string agent =
      Find("MERIDIAN_AGENT_BIN", {"meridian-agent", "../agent/meridian-agent"});
  if (agent.empty()) {
    fprintf(stderr,
            "meridian run: no agent answers on %s and meridian-agent was not "
            "found beside meridian (set MERIDIAN_AGENT_BIN)\n",
            socket.c_str());
    return -1;
  }
  if (!StartAgent(agent, socket, collector)) return -1;
  fd = ConnectAgent(socket.c_str());
  if (fd < 0) {
    fprintf(stderr, "meridian run: cannot connect to the agent on %s: %s\n",
            socket.c_str(), strerror(errno));
  }
  return fd;
}

bool IsOpenMpiLauncher(const std::string& program) {
  const std::string base = PathBaseName(program);
  // Debian names each MPI's launcher too: mpirun.openmpi, mpiexec.mpich.
  const std::string name = base.substr(0, base.find('.'));
  if (name != "mpirun" && name != "mpiexec" && name != "orterun") return false;
  // Debian: /usr/bin/mpirun -> /etc/alternatives/mpirun -> mpirun.openmpi.
  std::string path = program;
  if (program.find('/') == std::string::npos) {
    const char* env_path = getenv("PATH");
    std::string paths = env_path ? env_path : "/usr/bin:/bin";
    size_t start = 0;
    while (start <= paths.size()) {
      size_t end = paths.find(':', start);
      if (end == std::string::npos) end = paths.size();
      std::string candidate = paths.substr(start, end - start) + "/" + program;
      if (access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        break;
      }
      start = end + 1;
    }
  }
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) return false;
  return absl::StrContains(resolved, "openmpi") ||
         absl::StrContains(resolved, "orterun");
}

// The job's name (cli/job_name.h), with a warning where only this node
// can know it.
std::string JobName(const RunOptions& options) {
  const std::string stamp = UtcStamp();
  const std::string job = RunJobName(options.job, options.command,
                                     IdentityFromEnvironment().job, stamp);
  if (options.job.empty() && IsTorchrun(options.command) &&
      absl::EndsWith(job, "-" + stamp)) {
    fprintf(stderr,
            "meridian run: torchrun without --rdzv-id: on several nodes each "
            "would name the job differently; give every node the same --job "
            "(or --rdzv-id)\n");
  }
  return job;
}

// Whether the collector already holds `job`: true, false, or nullopt if it
// cannot tell (unreachable: the spans will be spooled), said on stderr.
std::optional<bool> JobExists(const std::string& collector,
                              const std::string& job) {
  ClientSecurity security;
  absl::Status status = AddSecurityFromEnvironment(&security);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      status.ok() ? ClientChannel(collector, security)
                  : absl::StatusOr<std::shared_ptr<grpc::Channel>>(status);
  if (!channel.ok()) {
    fprintf(stderr, "meridian run: %s\n",
            std::string(channel.status().message()).c_str());
    return std::nullopt;
  }
  auto stub = v1::Query::NewStub(*channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  v1::ListJobsRequest request;
  request.set_job(job);
  v1::ListJobsReply reply;
  const grpc::Status rpc = stub->ListJobs(&context, request, &reply);
  if (rpc.ok()) return true;
  if (rpc.error_code() == grpc::StatusCode::NOT_FOUND) return false;
  fprintf(stderr,
          "meridian run: cannot ask the collector at %s whether job %s "
          "exists (%s); going on\n",
          collector.c_str(), job.c_str(), rpc.error_message().c_str());
  return std::nullopt;
}

// Whether the agent serves `agent`: it answers a status request (a flush
// with timeout 0) on it. An agent at its connection limits accepts and
// closes at once, which only a read shows.
bool Served(int agent) {
  FlushRequest status;
  status.timeout_ms = 0;
  FlushReply reply;
  return SendMessage(agent, &status, sizeof(status), -1) &&
         ReceiveMessage(agent, &reply, sizeof(reply), nullptr) ==
             static_cast<long>(sizeof(reply));
}

// The job's own counters on its agent (JobFlushRequest): every process of
// the job there (another `meridian run` of the same job, a torch worker's,
// included), not other jobs'; with `totals`, the agent's (one older than
// per-job counts answered).
std::string Summary(const FlushReply& reply, bool totals) {
  const AgentCounters& c = reply.counters;
  return absl::StrCat(
      totals ? "the agent's totals: "
             : "this job on the agent, all its processes there: ",
      c.spans_received, " spans received, ", c.spans_sent, " sent, ",
      c.spans_spooled, " spooled, ", c.spans_dropped, " dropped, ",
      c.spans_rejected, " rejected, ", c.spans_invalid, " invalid");
}

// The variables the traced job runs with: the agent's socket, the job, the
// probe preloaded, and the GPU capture libraries where they were built.
std::map<std::string, std::string> CaptureEnvironment(
    const std::string& probe, const std::string& socket, const std::string& job,
    const RunOptions& options) {
  std::map<std::string, std::string> set = {
      {"MERIDIAN_AGENT_SOCKET", socket},
      {"MERIDIAN_JOB", job},
      // For a probe on a node without an agent: it starts one with these
      // (abi/agent_launch.h).
      {"MERIDIAN_COLLECTOR", options.collector},
  };
  const std::string agent =
      Find("MERIDIAN_AGENT_BIN", {"meridian-agent", "../agent/meridian-agent"});
  if (!agent.empty()) set["MERIDIAN_AGENT_BIN"] = agent;
  // The Python package (import meridian), ahead of the user's path.
  const std::string python =
      Find("MERIDIAN_PYTHON_DIR",
           {"../lib/meridian/python", "../capture/probe/python"});
  if (!python.empty()) {
    const char* old = getenv("PYTHONPATH");
    set["PYTHONPATH"] = old != nullptr && *old ? python + ":" + old : python;
  }
  std::string preload = probe;
  if (const char* old = getenv("LD_PRELOAD"); old != nullptr && *old) {
    preload = absl::StrContains(old, probe) ? old : probe + ":" + old;
  }
  set["LD_PRELOAD"] = preload;
  if (options.on_demand) set["MERIDIAN_TRACE"] = "on-demand";
  // GPU capture, where it was built: CUPTI and NVTX injections and NCCL's
  // profiler plugin. A value the user set already is kept (say, another
  // NCCL plugin); the libraries record only into the preloaded probe.
  const struct {
    const char* variable;
    const char* ours;  // names our library, overriding the search
    std::vector<std::string> candidates;
  } kCapture[] = {
      {"CUDA_INJECTION64_PATH",
       "MERIDIAN_CUDA_LIB",
       {"../lib/libmeridian_cuda.so", "../capture/cupti/libmeridian_cuda.so"}},
      {"NVTX_INJECTION64_PATH",
       "MERIDIAN_NVTX_LIB",
       {"../lib/libmeridian_nvtx.so", "../capture/nvtx/libmeridian_nvtx.so"}},
      {"NCCL_PROFILER_PLUGIN",
       "MERIDIAN_NCCL_PLUGIN",
       {"../lib/libnccl-profiler-meridian.so",
        "../capture/nccl/libnccl-profiler-meridian.so"}},
  };
  for (const auto& capture : kCapture) {
    if (const char* user = getenv(capture.variable); user != nullptr && *user) {
      continue;
    }
    const std::string library = Find(capture.ours, capture.candidates);
    if (!library.empty()) set[capture.variable] = library;
  }

  return set;
}

// The command as run: Open MPI's launcher is told to export `set` (and the
// probe's settings from this environment, if set) to every rank.
std::vector<std::string> LauncherCommand(
    std::vector<std::string> command,
    const std::map<std::string, std::string>& set) {
  if (!IsOpenMpiLauncher(command[0])) return command;
  std::vector<std::string> exports;
  for (const auto& [name, value] : set) {
    exports.push_back("-x");
    exports.push_back(name);
  }
  for (const char* name :
       {"MERIDIAN_START_STEP", "MERIDIAN_END_STEP", "MERIDIAN_RING_RECORDS",
        "MERIDIAN_CALLSITES", "MERIDIAN_PCONTROL", "MERIDIAN_CLOCK"}) {
    if (getenv(name) != nullptr) {
      exports.push_back("-x");
      exports.push_back(name);
    }
  }
  command.insert(command.begin() + 1, exports.begin(), exports.end());
  return command;
}

// Runs `command` with this process's environment plus `set` and waits for
// it: its exit status (128 + signal if killed), or nullopt if it could not
// be started.
std::optional<int> RunToExit(std::vector<std::string> command,
                             const std::map<std::string, std::string>& set,
                             int agent) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (set.count(name) == 0) environment.push_back(entry);
  }
  for (const auto& [name, value] : set) {
    environment.push_back(name + "=" + value);
  }
  std::vector<char*> argv, envp;
  for (std::string& arg : command) argv.push_back(arg.data());
  argv.push_back(nullptr);
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  const pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "meridian run: fork: %s\n", strerror(errno));
    return std::nullopt;
  }
  if (child == 0) {
    close(agent);
    execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    fprintf(stderr, "meridian run: cannot execute %s: %s\n", argv[0],
            strerror(error));
    _exit(error == ENOENT ? kRunNotFound : kRunCannotExecute);
  }
  // The terminal's Ctrl-C reaches the child too; we wait for it to end.
  signal(SIGINT, SIG_IGN);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status)     ? WEXITSTATUS(status)
         : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                               : 1;
}

// How the job's spans were delivered: "delivered", "spooled", "sending"
// (still, at the timeout) or "agent-gone"; JSON keys in docs/cli.md.
std::string DeliveryJson(const std::string& job, int exit_status,
                         const char* delivery, const FlushReply& reply) {
  const AgentCounters& c = reply.counters;
  std::string out = "{\"job\":";
  AppendJsonString(&out, job);
  absl::StrAppend(&out, ",\"exit_status\":", exit_status, ",\"delivery\":\"",
                  delivery, "\",\"collector\":");
  AppendJsonString(
      &out, std::string(reply.collector,
                        strnlen(reply.collector, sizeof(reply.collector))));
  absl::StrAppend(&out, ",\"spans_received\":", c.spans_received,
                  ",\"spans_sent\":", c.spans_sent,
                  ",\"spans_spooled\":", c.spans_spooled,
                  ",\"spans_dropped\":", c.spans_dropped,
                  ",\"spans_rejected\":", c.spans_rejected,
                  ",\"spans_invalid\":", c.spans_invalid, "}");
  return out;
}

// Asks the agent to deliver everything, and says how that went; returns
// the delivery's name (DeliveryJson) and fills *reply.
const char* ReportDelivery(int agent, const std::string& socket,
                           const std::string& job, int flush_timeout_ms,
                           FlushReply* reply_out) {
  JobFlushRequest request;
  request.timeout_ms = static_cast<uint32_t>(flush_timeout_ms);
  CopyField(job.c_str(), request.job, sizeof(request.job));
  FlushReply& reply = *reply_out;
  const auto flush = [&](int fd) {
    return SendMessage(fd, &request, sizeof(request), -1) &&
           ReceiveMessage(fd, &reply, sizeof(reply), nullptr) ==
               static_cast<long>(sizeof(reply));
  };
  bool answered = flush(agent);
  if (!answered) {
    // The agent that served the job is gone; one restarted on the same
    // socket and spool (a service manager's, or by hand) has its spool and
    // the processes' rings: it can confirm the delivery instead.
    const int again = ConnectAgent(socket.c_str());
    if (again >= 0) {
      answered = flush(again);
      close(again);
      if (answered) {
        fprintf(stderr,
                "meridian run: job %s: the agent on %s was replaced while "
                "the job ran; the new one answers for the delivery\n",
                job.c_str(), socket.c_str());
      }
    }
  }
  // An agent older than per-job counts closes the connection on the job's
  // request it does not know: asked as before, it answers with its totals.
  bool totals = false;
  if (!answered) {
    FlushRequest plain;
    plain.timeout_ms = request.timeout_ms;
    const int older = ConnectAgent(socket.c_str());
    if (older >= 0) {
      answered = SendMessage(older, &plain, sizeof(plain), -1) &&
                 ReceiveMessage(older, &reply, sizeof(reply), nullptr) ==
                     static_cast<long>(sizeof(reply));
      close(older);
      totals = answered;
    }
  }
  if (!answered) {
    reply = FlushReply();
    fprintf(stderr,
            "meridian run: job %s: the agent on %s went away before it "
            "confirmed delivery: what it had spooled is sent by an agent "
            "restarted on that spool, the rest of the job's spans is lost\n",
            job.c_str(), socket.c_str());
    return "agent-gone";
  }
  if (reply.state == FlushReply::kDelivered) {
    fprintf(stderr,
            "meridian run: job %s: every span acknowledged by %s (%s)\n",
            job.c_str(), reply.collector, Summary(reply, totals).c_str());
    if (reply.counters.spans_rejected > 0 || reply.counters.spans_invalid > 0) {
      fprintf(stderr,
              "meridian run: %llu spans rejected, %llu invalid (dropped one "
              "by one); the agent's log (%s/agent.log if meridian run started "
              "it) says why\n",
              static_cast<unsigned long long>(reply.counters.spans_rejected),
              static_cast<unsigned long long>(reply.counters.spans_invalid),
              DirOf(socket).c_str());
    }
    if (reply.counters.spool_corrupt > 0) {
      fprintf(stderr,
              "meridian run: %llu spool files were found damaged and set "
              "aside as .corrupt; their spans are lost (the agent's log names "
              "them)\n",
              static_cast<unsigned long long>(reply.counters.spool_corrupt));
    }
    return "delivered";
  }
  if (reply.state == FlushReply::kSpooled) {
    fprintf(stderr,
            "meridian run: job %s: collector %s unreachable; spans spooled "
            "in %s, sent when an agent with that spool reaches it (%s)\n",
            job.c_str(), reply.collector, reply.spool,
            Summary(reply, totals).c_str());
    return "spooled";
  }
  fprintf(stderr,
          "meridian run: job %s: still sending to %s after %d ms; the rest "
          "is spooled in %s (%s)\n",
          job.c_str(), reply.collector, flush_timeout_ms, reply.spool,
          Summary(reply, totals).c_str());
  return "sending";
}

}  // namespace

int RunTraced(const RunOptions& options) {
  if (options.command.empty()) {
    fprintf(stderr, "meridian run: no command given (meridian run -- CMD)\n");
    return kRunFailed;
  }
  const std::string probe = Find(
      "MERIDIAN_PROBE_LIB",
      {"../lib/libmeridian_probe.so", "../capture/probe/libmeridian_probe.so"});
  if (probe.empty()) {
    fprintf(stderr,
            "meridian run: libmeridian_probe.so not found beside meridian "
            "(set MERIDIAN_PROBE_LIB)\n");
    return kRunFailed;
  }
  // Named and checked before anything starts, and said at once, so that
  // `meridian trace --job J` can be typed while the job runs.
  const std::string job = JobName(options);
  if (!options.job.empty() && !options.append &&
      !InsideLauncher(
          [](const char* name) -> const char* { return getenv(name); }) &&
      JobExists(options.collector, job).value_or(false)) {
    fprintf(stderr,
            "meridian run: the collector at %s already holds job %s: its "
            "spans would merge into the old job's. Pass --append to add to "
            "it, or choose another --job (meridian jobs lists them)\n",
            options.collector.c_str(), job.c_str());
    return kRunFailed;
  }
  fprintf(stderr, "meridian run: job %s\n", job.c_str());
  const std::string socket = DefaultAgentSocket();
  // Held until the job ends: said at once, so that the agent does not close
  // it as silent (--idle-timeout-ms) while a long job runs. An agent that
  // closes it unserved may be one exiting as idle just then (its last job
  // ended as this one started): asked again, the next answer is a new
  // agent's, or the same refusal.
  LauncherHello hello;
  hello.pid = getpid();
  int agent = -1;
  bool served = false;
  for (int attempt = 0; attempt < 3 && !served; ++attempt) {
    if (agent >= 0) close(agent);
    agent = ConnectOrStartAgent(socket, options.collector);
    if (agent < 0) return kRunFailed;
    served = SendMessage(agent, &hello, sizeof(hello), -1) && Served(agent);
  }
  if (!served) {
    fprintf(stderr,
            "meridian run: job %s: the agent on %s closed this connection "
            "unserved (it is at --max-connections, or this user at "
            "--max-connections-per-user; `meridian-agent --status` counts "
            "the connections it refused): not starting the job untraced\n",
            job.c_str(), socket.c_str());
    close(agent);
    return kRunFailed;
  }

  const std::map<std::string, std::string> set =
      CaptureEnvironment(probe, socket, job, options);
  const std::optional<int> exit_status =
      RunToExit(LauncherCommand(options.command, set), set, agent);
  if (!exit_status.has_value()) {
    close(agent);
    return kRunFailed;
  }
  FlushReply reply;
  const char* delivery =
      ReportDelivery(agent, socket, job, options.flush_timeout_ms, &reply);
  close(agent);
  if (options.json) {
    printf("%s\n", DeliveryJson(job, *exit_status, delivery, reply).c_str());
  }
  // A job that succeeded but whose delivery nobody confirmed is not a
  // success: its trace may be gone.
  if (*exit_status == 0 && std::strcmp(delivery, "agent-gone") == 0) {
    return kRunFailed;
  }
  return *exit_status;
}

int RequestTrace(const std::string& job, int steps, int seconds, bool json) {
  const std::string socket = DefaultAgentSocket();
  int fd = ConnectAgent(socket.c_str());
  if (fd < 0) {
    fprintf(stderr, "meridian trace: no agent answers on %s: %s\n",
            socket.c_str(), strerror(errno));
    return 1;
  }
  TraceRequest request;
  request.steps = steps;
  request.seconds = seconds;
  CopyField(job.c_str(), request.job, sizeof(request.job));
  TraceReply reply;
  if (!SendMessage(fd, &request, sizeof(request), -1) ||
      ReceiveMessage(fd, &reply, sizeof(reply), nullptr) !=
          static_cast<long>(sizeof(reply))) {
    fprintf(stderr, "meridian trace: the agent on %s did not answer\n",
            socket.c_str());
    close(fd);
    return 1;
  }
  close(fd);
  if (json) {
    std::string out = "{\"job\":";
    AppendJsonString(&out, job);
    absl::StrAppend(&out, ",\"processes\":", reply.processes,
                    ",\"steps\":", steps, ",\"seconds\":", seconds, "}");
    printf("%s\n", out.c_str());
    return reply.processes > 0 ? 0 : 1;
  }
  printf("meridian trace: %u processes of job %s on this node will record ",
         reply.processes, job.c_str());
  if (steps > 0) {
    printf("the next %d steps\n", steps);
  } else {
    printf("for %d seconds\n", seconds);
  }
  return reply.processes > 0 ? 0 : 1;
}

}  // namespace meridian
