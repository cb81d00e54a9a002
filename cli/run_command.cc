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

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capture/probe/agent_protocol.h"
#include "capture/probe/launch_env.h"

extern char** environ;

namespace meridian {
namespace {

std::string Base(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

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
  const std::string base = Base(program);
  if (base != "mpirun" && base != "mpiexec" && base != "orterun") return false;
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

std::string Summary(const FlushReply& reply) {
  const AgentCounters& c = reply.counters;
  return absl::StrCat("agent: ", c.spans_received, " spans received, ",
                      c.spans_sent, " sent, ", c.spans_spooled, " spooled, ",
                      c.spans_dropped, " dropped, ", c.spans_rejected,
                      " rejected, ", c.spans_invalid, " invalid");
}

// The variables the traced job runs with: the agent's socket, the job, the
// probe preloaded, and the GPU capture libraries where they were built.
std::map<std::string, std::string> CaptureEnvironment(const std::string& probe,
                                                      const std::string& socket,
                                                      const std::string& job,
                                                      bool on_demand) {
  std::map<std::string, std::string> set = {
      {"MERIDIAN_AGENT_SOCKET", socket},
      {"MERIDIAN_JOB", job},
  };
  std::string preload = probe;
  if (const char* old = getenv("LD_PRELOAD"); old != nullptr && *old) {
    preload = absl::StrContains(old, probe) ? old : probe + ":" + old;
  }
  set["LD_PRELOAD"] = preload;
  if (on_demand) set["MERIDIAN_TRACE"] = "on-demand";
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
// step window, if set) to every rank.
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
       {"MERIDIAN_START_STEP", "MERIDIAN_END_STEP", "MERIDIAN_RING_RECORDS"}) {
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
    fprintf(stderr, "meridian run: cannot execute %s: %s\n", argv[0],
            strerror(errno));
    _exit(127);
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

// Asks the agent to deliver everything, and says how that went.
void ReportDelivery(int agent, const std::string& socket,
                    const std::string& job, int flush_timeout_ms) {
  FlushRequest request;
  request.timeout_ms = flush_timeout_ms;
  FlushReply reply;
  if (!SendMessage(agent, &request, sizeof(request), -1) ||
      ReceiveMessage(agent, &reply, sizeof(reply), nullptr) !=
          static_cast<long>(sizeof(reply))) {
    fprintf(stderr,
            "meridian run: job %s: the agent on %s went away before it "
            "confirmed delivery; a restarted agent resends from its spool\n",
            job.c_str(), socket.c_str());
  } else if (reply.state == FlushReply::kDelivered) {
    fprintf(stderr,
            "meridian run: job %s: every span acknowledged by %s (%s)\n",
            job.c_str(), reply.collector, Summary(reply).c_str());
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
  } else if (reply.state == FlushReply::kSpooled) {
    fprintf(stderr,
            "meridian run: job %s: collector %s unreachable; spans spooled "
            "in %s, sent when an agent with that spool reaches it (%s)\n",
            job.c_str(), reply.collector, reply.spool, Summary(reply).c_str());
  } else {
    fprintf(stderr,
            "meridian run: job %s: still sending to %s after %d ms; the rest "
            "is spooled in %s (%s)\n",
            job.c_str(), reply.collector, flush_timeout_ms, reply.spool,
            Summary(reply).c_str());
  }
}

}  // namespace

int RunTraced(const RunOptions& options) {
  if (options.command.empty()) {
    fprintf(stderr, "meridian run: no command given (meridian run -- CMD)\n");
    return 2;
  }
  const std::string probe = Find(
      "MERIDIAN_PROBE_LIB",
      {"../lib/libmeridian_probe.so", "../capture/probe/libmeridian_probe.so"});
  if (probe.empty()) {
    fprintf(stderr,
            "meridian run: libmeridian_probe.so not found beside meridian "
            "(set MERIDIAN_PROBE_LIB)\n");
    return 2;
  }
  const std::string socket = DefaultAgentSocket();
  const int agent = ConnectOrStartAgent(socket, options.collector);
  if (agent < 0) return 2;
  // Held until the job ends: said at once, so that the agent does not close
  // it as silent (--idle-timeout-ms) while a long job runs.
  LauncherHello hello;
  hello.pid = getpid();
  if (!SendMessage(agent, &hello, sizeof(hello), -1)) {
    fprintf(stderr, "meridian run: the agent on %s closed the connection\n",
            socket.c_str());
    close(agent);
    return 2;
  }

  std::string job = options.job;
  if (job.empty()) job = IdentityFromEnvironment().job;
  if (job.empty()) job = Base(options.command[0]) + "-" + UtcStamp();

  const std::map<std::string, std::string> set =
      CaptureEnvironment(probe, socket, job, options.on_demand);
  const std::optional<int> exit_status =
      RunToExit(LauncherCommand(options.command, set), set, agent);
  if (!exit_status.has_value()) {
    close(agent);
    return 2;
  }
  ReportDelivery(agent, socket, job, options.flush_timeout_ms);
  close(agent);
  return *exit_status;
}

int RequestTrace(const std::string& job, int steps, int seconds) {
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
