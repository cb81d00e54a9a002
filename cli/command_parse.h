// Parses `meridian`'s arguments against its command tree
// (cli/command_tree.h) and says what to do: run a command with its flags,
// print help or the version, or refuse the line with the reason. CLI11
// reports with exceptions; none leaves ParseArgs.
//
// A command accepts only its own flags, --collector and --request-timeout
// (before or after its name): `meridian critical-path --job J --steps 10` is
// refused with "critical-path: unknown flag --steps (a flag of export, stats)".
// `meridian run` needs `--` before its command, and everything after it is
// the command's, untouched (`meridian run -- ./app -o out`).
#ifndef MERIDIAN_CLI_COMMAND_PARSE_H_
#define MERIDIAN_CLI_COMMAND_PARSE_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/command_line.h"

namespace meridian {

struct ParsedArgs {
  enum class Action {
    kRun,         // run `command` with `line`
    kHelp,        // print the help of `command`; exit 0
    kVersion,     // print `message`; exit 0
    kUsageError,  // print `message` and the usage of `command`
  };
  Action action = Action::kUsageError;
  // The command concerned; "" is meridian itself (no command, or an
  // unknown one).
  std::string command;
  std::string message;
  // kRun: --collector, else $MERIDIAN_COLLECTOR, else kDefaultCollector.
  std::string collector;
  // kRun: --request-timeout (1 to 86400), else kDefaultRequestTimeoutS.
  int request_timeout_s = 0;
  // kRun: the command's flags by long name ("output" for -o; "" per use of
  // a switch; both values of `--split-by step 10`), and its positional
  // arguments (import's paths, run's command).
  CommandLine line;
};

// `args` as main() gets them (args[0] is the program). `tree` may be parsed
// again afterwards.
ParsedArgs ParseArgs(CLI::App& tree, const std::vector<std::string>& args);

}  // namespace meridian

#endif  // MERIDIAN_CLI_COMMAND_PARSE_H_
