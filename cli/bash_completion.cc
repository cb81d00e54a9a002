#include "cli/bash_completion.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "cli/command_tree.h"

namespace meridian {
namespace {

// The script's text with "_meridian" for its functions' prefix (replaced
// by the tree's name at the end).
constexpr char kHelpers[] = R"(_meridian_words() {
  mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
}
_meridian_files() {
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen "$1" -- "$cur")
}
)";

// Finds the command (the first word that is neither a flag nor the value
// of one of the tree's flags) and, after it, `--` (run's command follows).
constexpr char kFindCommand[] = R"(  local cur=${COMP_WORDS[COMP_CWORD]} prev=''
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  local command='' dashes=0 i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --) [[ -n $command ]] && { dashes=$i; break; } ;;
)";

constexpr char kAfterDashes[] = R"(      -*) ;;
      *) [[ -z $command ]] && command=${COMP_WORDS[i]} ;;
    esac
  done
  if ((dashes > 0)); then
    if ((COMP_CWORD == dashes + 1)); then
      mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    else
      _meridian_files -f
    fi
    return
  fi
)";

constexpr char kOffer[] = R"(  if [[ $cur == -* ]]; then
    _meridian_words "$flags"
  elif [[ -n $files ]]; then
    _meridian_files "$files"
  else
    _meridian_words "$words"
  fi
}
)";

// What completes a value or an argument, told by its name (see
// cli/command_tree.h): "files='-f'", "words='a b'", or "" for nothing.
std::string Completes(const std::string& type_name,
                      const std::string& commands) {
  const std::string first = type_name.substr(0, type_name.find(' '));
  if (first == "--") return "words='--'";  // run's "-- CMD..."
  if (first.find('|') != std::string::npos) {
    return absl::StrCat("words='", absl::StrReplaceAll(first, {{"|", " "}}),
                        "'");
  }
  if (first.rfind("FILE", 0) == 0 || first.rfind("PATH", 0) == 0) {
    return "files='-f'";
  }
  if (first == "DIR") return "files='-d'";
  if (first == "COMMAND") return absl::StrCat("words='", commands, "'");
  return "";
}

std::vector<std::string> Names(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_snames()) {
    names.push_back("-" + name);
  }
  for (const std::string& name : option.get_lnames()) {
    names.push_back("--" + name);
  }
  return names;
}

// The case arms for the values of `command`'s flags, matched against
// "COMMAND PREVIOUS-WORD"; `pattern` matches the command's word ("export";
// * for the tree's flags, which every command takes). The patterns of
// values nothing completes go to `nothing`.
std::string ValueArms(const CLI::App& command, const std::string& pattern,
                      const std::string& commands,
                      std::vector<std::string>* nothing) {
  std::string arms;
  for (const CLI::Option* flag : CommandFlags(command)) {
    if (!TakesValue(*flag)) continue;
    std::vector<std::string> patterns;
    for (const std::string& name : Names(*flag)) {
      patterns.push_back(absl::StrCat(pattern, "' ", name, "'"));
    }
    const std::string completes = Completes(flag->get_type_name(), commands);
    if (completes.empty()) {
      nothing->insert(nothing->end(), patterns.begin(), patterns.end());
    } else {
      absl::StrAppend(&arms, "    ", absl::StrJoin(patterns, "|"), ") ",
                      completes, " ;;\n");
    }
  }
  return arms;
}

// The case arm of one command ('' for the tree): its flags and what
// completes its arguments.
std::string CommandArm(const CLI::App& command, const std::string& pattern,
                       const std::string& commands) {
  std::vector<std::string> flags;
  for (const CLI::Option* flag : CommandFlags(command)) {
    for (const std::string& name : Names(*flag)) flags.push_back(name);
  }
  std::string arguments = command.get_parent() == nullptr
                              ? absl::StrCat("words='", commands, "'")
                              : "";
  for (const CLI::Option* positional : CommandPositionals(command)) {
    arguments = Completes(positional->get_type_name(), commands);
  }
  return absl::StrCat("    ", pattern, ") flags='", absl::StrJoin(flags, " "),
                      "'", arguments.empty() ? "" : " ", arguments, " ;;\n");
}

}  // namespace

std::string BashCompletion(const CLI::App& tree) {
  const std::string name = tree.get_name();
  std::vector<std::string> names;
  for (const CLI::App* command : VisibleCommands(tree)) {
    names.push_back(command->get_name());
  }
  const std::string commands = absl::StrJoin(names, " ");
  std::vector<std::string> tree_values;
  for (const CLI::Option* flag : CommandFlags(tree)) {
    if (!TakesValue(*flag)) continue;
    for (const std::string& flag_name : Names(*flag)) {
      tree_values.push_back(flag_name);
    }
  }
  std::vector<std::string> nothing;
  std::string values = ValueArms(tree, "*", commands, &nothing);
  std::string arms = CommandArm(tree, "''", commands);
  for (const CLI::App* command : VisibleCommands(tree)) {
    values += ValueArms(*command, command->get_name(), commands, &nothing);
    arms += CommandArm(*command, command->get_name(), commands);
  }
  if (!nothing.empty()) {
    // Values such as a job's name: nothing to offer.
    values += absl::StrCat("    ", absl::StrJoin(nothing, " |\\\n      "),
                           ")\n      return ;;\n");
  }
  std::string script = absl::StrCat(
      "# bash completion for ", name, ", generated from its command line by `",
      name, " completion bash`.\n", kHelpers, "_meridian() {\n", kFindCommand,
      tree_values.empty()
          ? ""
          : absl::StrCat("      ", absl::StrJoin(tree_values, "|"),
                         ") [[ -z $command ]] && ((i++)) ;;\n"),
      kAfterDashes, "  local flags='' files='' words=''\n",
      "  case \"$command $prev\" in\n", values, "  *)\n    case $command in\n",
      arms, "    *) return ;;\n    esac\n  esac\n", kOffer,
      "complete -F _meridian ", name, "\n");
  const std::string prefix = "_" + absl::StrReplaceAll(name, {{"-", "_"}});
  return absl::StrReplaceAll(script, {{"_meridian", prefix}});
}

}  // namespace meridian
