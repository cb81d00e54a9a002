#include "cli/command_parse.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_tree.h"
#include "common/utf8.h"

namespace meridian {
namespace {

// The command the words named, if any got that far.
const CLI::App* Selected(const CLI::App& tree) {
  const std::vector<CLI::App*> selected = tree.get_subcommands();
  return selected.empty() ? nullptr : selected.front();
}

// The visible commands other than `command` that have a flag `flag`.
std::vector<std::string> CommandsWithFlag(const CLI::App& tree,
                                          const CLI::App* command,
                                          const std::string& flag) {
  std::vector<std::string> names;
  for (const CLI::App* other : VisibleCommands(tree)) {
    if (other != command && other->get_option_no_throw(flag) != nullptr) {
      names.push_back(other->get_name());
    }
  }
  return names;
}

// The words no command or flag took ("--" marks aside).
std::vector<std::string> Leftovers(const CLI::App& tree) {
  std::vector<std::string> left = tree.remaining(true);
  left.erase(std::remove(left.begin(), left.end(), "--"), left.end());
  return left;
}

// The first leftover: an unknown flag, or an argument nothing takes.
std::string Leftover(const CLI::App& tree, const CLI::App* command) {
  const std::string word = Leftovers(tree).front();
  if (word.size() > 1 && word[0] == '-') {
    const std::string flag = word.substr(0, word.find('='));
    std::string message = absl::StrCat("unknown flag ", flag);
    const std::vector<std::string> others =
        CommandsWithFlag(tree, command, flag);
    if (!others.empty()) {
      absl::StrAppend(&message, " (a flag of ", absl::StrJoin(others, ", "),
                      ")");
    }
    return message;
  }
  if (command == nullptr) return absl::StrCat("unknown command \"", word, "\"");
  return absl::StrCat("unexpected argument \"", word, "\"");
}

// The first required flag or argument of `command` not given.
std::string Missing(const CLI::App& command) {
  for (const CLI::Option* option : command.get_options()) {
    if (!option->get_required() || option->count() > 0) continue;
    return absl::StrCat(command.get_name(), " needs ",
                        option->get_positional() ? option->get_type_name()
                                                 : FlagSynopsis(*option));
  }
  return absl::StrCat(command.get_name(), ": a required flag is missing");
}

// A CLI11 parse error as a sentence about `command`'s line.
std::string Explain(const CLI::App& tree, const CLI::App* command,
                    const CLI::ParseError& error) {
  const std::string prefix =
      command == nullptr ? "" : absl::StrCat(command->get_name(), ": ");
  // An unknown word first: it may be why something required is missing.
  if (!Leftovers(tree).empty()) return prefix + Leftover(tree, command);
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    return command == nullptr ? "no command given" : Missing(*command);
  }
  // "--job: 1 required J missing"; "json was given a disallowed flag
  // override".
  const std::string what = error.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    if (what.find(" missing") != std::string::npos) {
      return prefix + what.substr(0, what.find(':')) + " needs a value";
    }
    if (what.find("flag override") != std::string::npos) {
      return absl::StrCat(prefix, "--", what.substr(0, what.find(' ')),
                          " takes no value");
    }
  }
  return prefix + what;
}

// The flags and arguments given to `command`, for the code that runs it.
CommandLine Given(const CLI::App& command) {
  std::map<std::string, std::vector<std::string>> values;
  std::vector<std::string> positional;
  for (const CLI::Option* option : command.get_options()) {
    if (option->count() == 0) continue;
    const std::vector<std::string>& results = option->results();
    if (option->get_positional()) {
      positional.insert(positional.end(), results.begin(), results.end());
      continue;
    }
    std::vector<std::string>& value = values[option->get_lnames().front()];
    if (!TakesValue(*option)) {
      value.resize(value.size() + option->count());
    } else {
      value.insert(value.end(), results.begin(), results.end());
    }
  }
  return CommandLine::FromValues(std::move(values), std::move(positional));
}

ParsedArgs UsageError(const CLI::App* command, std::string message) {
  ParsedArgs parsed;
  parsed.action = ParsedArgs::Action::kUsageError;
  parsed.command = command == nullptr ? "" : command->get_name();
  parsed.message = std::move(message);
  return parsed;
}

ParsedArgs Help(const std::string& command) {
  ParsedArgs parsed;
  parsed.action = ParsedArgs::Action::kHelp;
  parsed.command = command;
  return parsed;
}

// `meridian help [COMMAND]`.
ParsedArgs HelpCommand(const CLI::App& tree, const CLI::App& help) {
  const std::vector<std::string>& asked = help.get_option("command")->results();
  if (asked.empty()) return Help("");
  if (FindCommand(tree, asked.front()) == nullptr) {
    return UsageError(nullptr,
                      absl::StrCat("unknown command \"", asked.front(), "\""));
  }
  return Help(asked.front());
}

}  // namespace

ParsedArgs ParseArgs(CLI::App& tree, const std::vector<std::string>& args) {
  tree.clear();
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  if (!reversed.empty()) reversed.pop_back();  // the program's name
  std::optional<std::string> error;
  const CLI::App* command = nullptr;
  try {
    tree.parse(std::move(reversed));
    command = Selected(tree);
  } catch (const CLI::CallForHelp&) {
    command = Selected(tree);
    return Help(command == nullptr ? "" : command->get_name());
  } catch (const CLI::CallForVersion& version) {
    ParsedArgs parsed;
    parsed.action = ParsedArgs::Action::kVersion;
    parsed.message = version.what();
    return parsed;
  } catch (const CLI::ParseError& e) {
    command = Selected(tree);
    error = Explain(tree, command, e);
  }
  // Without `--`, run cannot tell its flags from the command's.
  if (command != nullptr && command->get_name() == "run" &&
      std::find(args.begin(), args.end(), "--") == args.end()) {
    return UsageError(command,
                      "run needs -- before the command: meridian run "
                      "[flags] -- CMD...");
  }
  if (error.has_value()) return UsageError(command, *std::move(error));
  if (command->get_name() == "help") return HelpCommand(tree, *command);
  ParsedArgs parsed;
  parsed.action = ParsedArgs::Action::kRun;
  parsed.command = command->get_name();
  const CLI::Option* collector = tree.get_option("--collector");
  parsed.collector = collector->count() > 0 ? collector->results().back()
                                            : collector->get_default_str();
  const CLI::Option* timeout = tree.get_option("--request-timeout");
  if (!absl::SimpleAtoi(timeout->count() > 0 ? timeout->results().back()
                                             : timeout->get_default_str(),
                        &parsed.request_timeout_s) ||
      parsed.request_timeout_s < 1 || parsed.request_timeout_s > 86400) {
    return UsageError(command,
                      "--request-timeout must be seconds (1 to 86400)");
  }
  // Flags whose values travel as the requests' strings (job names, name
  // globs, scales), which must be UTF-8; paths need not be.
  for (const char* text : {"job", "name", "scale"}) {
    const CLI::Option* option =
        command->get_option_no_throw(std::string("--") + text);
    if (option == nullptr) continue;
    for (const std::string& value : option->results()) {
      if (!IsValidUtf8(value)) {
        return UsageError(command,
                          absl::StrCat("--", text, " \"", RepairUtf8(value),
                                       "\" is not valid UTF-8"));
      }
    }
  }
  parsed.line = Given(*command);
  return parsed;
}

}  // namespace meridian
