// The `meridian` command line as one CLI11 tree: every command, its flags,
// their value names and one-line help. Everything that describes the
// command line is generated from this tree, so none can drift from the
// parser: `--help` (cli/help_text.h), the man pages (cli/man_page.h), the
// bash completion (cli/bash_completion.h); docs/cli.md is checked against
// it (cli/cli_docs_test.cc).
//
// Conventions the generators rely on:
//   - app description: one line (the command list, the man page's NAME);
//     footer: the paragraphs after it (help and the man page's
//     DESCRIPTION).
//   - A value flag's type_name names its value: FILE, DIR and PATH... are
//     completed as file names, "a|b|c" (its first word) as those words.
//   - A positional's type_name is how the synopsis shows it
//     ("PATH...", "-- CMD...").
//   - A command in group "" is hidden (`completion`, `man`): parsed, but
//     neither listed in help nor documented.
//   - Options hold no variables: the parse (cli/command_parse.h) reads each
//     option's results, so one tree serves any number of parses and the
//     generators need no state.
//
// Example: `meridian critical-path --job J --step 3 --json` is the
// subcommand "critical-path" with results --job=[J], --step=[3], --json.
#ifndef MERIDIAN_CLI_COMMAND_TREE_H_
#define MERIDIAN_CLI_COMMAND_TREE_H_

#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace meridian {

// The default of --collector where $MERIDIAN_COLLECTOR is unset.
inline constexpr char kDefaultCollector[] = "127.0.0.1:7070";
// The default of --request-timeout: the seconds a call to the collector
// may wait for its answer (a streamed one, for each of its parts). Long
// enough for a whole-job analysis of a large job (docs/cli.md).
inline constexpr int kDefaultRequestTimeoutS = 600;

// A fresh tree, nothing parsed yet.
std::unique_ptr<CLI::App> MeridianCommandTree();

// The command named `name` in `tree` (hidden ones too); `tree` itself for
// ""; null if there is none.
const CLI::App* FindCommand(const CLI::App& tree, const std::string& name);

// Whether `option` takes a value (a switch, such as --json, does not).
bool TakesValue(const CLI::Option& option);

// How a flag is written in a synopsis: "-o FILE", "--job J", "--json".
std::string FlagSynopsis(const CLI::Option& option);

// "-o, --output FILE", "--json", "PATH...": how help and man pages name an
// option.
std::string OptionNames(const CLI::Option& option);

// An option's help with its default: "the collector's address (default
// $MERIDIAN_COLLECTOR, else 127.0.0.1:7070)".
std::string OptionHelp(const CLI::Option& option);

// "meridian [--collector HOST:PORT] [--request-timeout S] COMMAND [flags]"
// for the tree,
// "meridian export --job J [flags]" for a command: the required flags,
// then "[flags]" if it has optional ones, then its positionals.
std::string CommandSynopsis(const CLI::App& command);

// The commands of `tree` that help, man pages and completion show: those
// not hidden, in the tree's order.
std::vector<const CLI::App*> VisibleCommands(const CLI::App& tree);

// The flags of `command` as its help lists them: not positionals, in the
// order they were added, -h/--help last.
std::vector<const CLI::Option*> CommandFlags(const CLI::App& command);

// The positionals of `command` (PATH..., -- CMD..., COMMAND).
std::vector<const CLI::Option*> CommandPositionals(const CLI::App& command);

}  // namespace meridian

#endif  // MERIDIAN_CLI_COMMAND_TREE_H_
