// Bash completion for the command tree (cli/command_tree.h), generated
// from it: `meridian completion bash` prints it, deploy/install.sh installs
// it as share/bash-completion/completions/meridian. It completes
//   - command names: `meridian st<TAB>` -> stats stragglers steps;
//   - each command's own flags: `meridian critical-path --s<TAB>` -> --step;
//   - flag values with a fixed set, from the value's name
//     (`--format chrome|perfetto|kineto`), and file or directory names
//     (FILE, DIR);
//   - import's PATH... as files; run's command after `--` as a command
//     name, then files; `help`'s COMMAND as command names.
// The script needs bash 4 and nothing of the bash-completion package.
#ifndef MERIDIAN_CLI_BASH_COMPLETION_H_
#define MERIDIAN_CLI_BASH_COMPLETION_H_

#include <string>

#include "CLI/CLI.hpp"

namespace meridian {

// The script for `tree`: a function _TREE (dashes as underscores) and the
// `complete` line that binds it to the program's name.
std::string BashCompletion(const CLI::App& tree);

}  // namespace meridian

#endif  // MERIDIAN_CLI_BASH_COMPLETION_H_
