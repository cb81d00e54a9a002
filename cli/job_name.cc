#include "cli/job_name.h"

#include "absl/strings/match.h"
#include "import/paths.h"

namespace meridian {
namespace {

// Where torchrun's own arguments start in `command`; 0 if it is not
// torchrun.
size_t TorchrunArguments(const std::vector<std::string>& command) {
  if (command.empty()) return 0;
  const std::string program = PathBaseName(command[0]);
  if (program == "torchrun") return 1;
  if (absl::StartsWith(program, "python") && command.size() > 2 &&
      command[1] == "-m" &&
      (command[2] == "torch.distributed.run" ||
       command[2] == "torch.distributed.launch")) {
    return 3;
  }
  return 0;
}

// torchrun's options that take no value.
bool IsTorchrunSwitch(const std::string& arg) {
  return arg == "--standalone" || arg == "--no-python" ||
         arg == "--no_python" || arg == "-m" || arg == "--module" ||
         arg == "--run-path" || arg == "--run_path";
}

}  // namespace

bool IsTorchrun(const std::vector<std::string>& command) {
  return TorchrunArguments(command) > 0;
}

std::string TorchrunRunId(const std::vector<std::string>& command) {
  const size_t first = TorchrunArguments(command);
  if (first == 0) return "";
  for (size_t i = first; i < command.size(); ++i) {
    const std::string& arg = command[i];
    for (const std::string flag : {"--rdzv-id", "--rdzv_id"}) {
      if (arg == flag && i + 1 < command.size()) return command[i + 1];
      if (absl::StartsWith(arg, flag + "=")) {
        return arg.substr(flag.size() + 1);
      }
    }
    // The training script and its own arguments follow the first word
    // that is neither an option of torchrun's nor an option's value.
    if (!absl::StartsWith(arg, "-")) break;
    if (!IsTorchrunSwitch(arg) && arg.find('=') == std::string::npos) ++i;
  }
  return "";
}

std::string RunJobName(const std::string& job_flag,
                       const std::vector<std::string>& command,
                       const std::string& launcher_job,
                       const std::string& utc_stamp) {
  if (!job_flag.empty()) return job_flag;
  if (!launcher_job.empty()) return launcher_job;
  const std::string run_id = TorchrunRunId(command);
  if (!run_id.empty() && run_id != "none") return "torchrun-" + run_id;
  return PathBaseName(command.empty() ? "job" : command[0]) + "-" + utc_stamp;
}

}  // namespace meridian
