#include "tests/collector_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace meridian {

absl::StatusOr<CollectorProcess> CollectorProcess::Start(
    const std::string& binary, const std::string& db_path,
    const std::string& listen, const std::vector<std::string>& flags,
    const std::function<void()>& in_child) {
  std::vector<std::string> args = {binary, "--listen", listen, "--store",
                                   db_path};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int out[2];
  if (pipe(out) != 0) return absl::InternalError("pipe failed");
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    if (in_child) in_child();
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  FILE* stdout_of_child = fdopen(out[0], "r");
  char line[512];
  CollectorProcess process;
  process.pid_ = pid;
  if (fgets(line, sizeof(line), stdout_of_child) == nullptr) {
    fclose(stdout_of_child);
    return absl::UnavailableError(
        absl::StrCat(binary, " exited before it was listening"));
  }
  fclose(stdout_of_child);
  // "meridian-collector listening on HOST:PORT, store PATH"
  std::string text(line);
  size_t at = text.find(" on ");
  size_t comma = text.find(',', at);
  if (at == std::string::npos || comma == std::string::npos) {
    return absl::InternalError(absl::StrCat("unexpected first line: ", text));
  }
  process.address_ = text.substr(at + 4, comma - at - 4);
  return process;
}

CollectorProcess::CollectorProcess(CollectorProcess&& other) noexcept
    : pid_(other.pid_), address_(std::move(other.address_)) {
  other.pid_ = -1;
}

CollectorProcess::~CollectorProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void CollectorProcess::Kill() {
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int CollectorProcess::Terminate() {
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

}  // namespace meridian
