#include "cli/man_page.h"

#include <cctype>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cli/command_tree.h"
#include "common/version.h"

namespace meridian {
namespace {

// `text` as roff text: backslashes and dashes escaped (a dash would be a
// hyphen, which man may render as another character), a line that would
// start with a control character protected.
std::string Roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

// A tagged paragraph: `tag` in bold, `text` indented below it.
std::string Tagged(const std::string& tag, const std::string& text) {
  return absl::StrCat(".TP\n.B ", Roff(tag), "\n", Roff(text), "\n");
}

// "meridian" for the tree, "meridian export" for a command.
std::string CommandPath(const CLI::App& command) {
  return command.get_parent() == nullptr
             ? command.get_name()
             : absl::StrCat(command.get_parent()->get_name(), " ",
                            command.get_name());
}

std::string Header(const CLI::App& command) {
  std::string page = ManPageName(command);
  page.resize(page.size() - 2);  // ".1"
  const CLI::App& tree =
      command.get_parent() == nullptr ? command : *command.get_parent();
  return absl::StrCat(".TH ", absl::AsciiStrToUpper(page), " 1 \"\" \"",
                      tree.get_name(), " ", kVersion,
                      "\" \"Meridian Manual\"\n", ".SH NAME\n", Roff(page),
                      " \\- ", Roff(command.get_description()), "\n");
}

std::string Synopsis(const CLI::App& command) {
  const std::string path = CommandPath(command);
  std::string rest = CommandSynopsis(command).substr(path.size());
  if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
  return absl::StrCat(".SH SYNOPSIS\n.B ", Roff(path), "\n", Roff(rest), "\n");
}

std::string Description(const CLI::App& command) {
  std::string description = command.get_description();
  if (!description.empty()) {
    description[0] = static_cast<char>(
        std::toupper(static_cast<unsigned char>(description[0])));
    description += ".";
  }
  std::string out = absl::StrCat(".SH DESCRIPTION\n", Roff(description), "\n");
  if (!command.get_footer().empty()) {
    absl::StrAppend(&out, ".PP\n", Roff(command.get_footer()), "\n");
  }
  return out;
}

std::string Options(const CLI::App& command) {
  std::string out = ".SH OPTIONS\n";
  for (const CLI::Option* option : CommandFlags(command)) {
    out += Tagged(OptionNames(*option), OptionHelp(*option));
  }
  for (const CLI::Option* option : CommandPositionals(command)) {
    out += Tagged(OptionNames(*option), OptionHelp(*option));
  }
  return out;
}

// The tree's page: its commands, and the variables its flags default to.
std::string TreeSections(const CLI::App& tree) {
  std::string out = ".SH COMMANDS\n";
  for (const CLI::App* command : VisibleCommands(tree)) {
    out += Tagged(command->get_name(), command->get_description());
  }
  std::string environment;
  for (const CLI::Option* option : CommandFlags(tree)) {
    if (option->get_envname().empty()) continue;
    environment += Tagged(option->get_envname(),
                          absl::StrCat("the default of ", OptionNames(*option),
                                       " where it is not given"));
  }
  if (!environment.empty()) out += ".SH ENVIRONMENT\n" + environment;
  return out;
}

std::string SeeAlso(const CLI::App& command) {
  std::string out = ".SH SEE ALSO\n";
  if (command.get_parent() != nullptr) {
    return absl::StrCat(out, Roff(command.get_parent()->get_name()), "(1)\n");
  }
  std::string pages;
  for (const CLI::App* sub : VisibleCommands(command)) {
    absl::StrAppend(
        &pages, pages.empty() ? "" : ", ",
        Roff(absl::StrCat(command.get_name(), "-", sub->get_name())), "(1)");
  }
  return out + pages + "\n";
}

}  // namespace

std::string ManPageName(const CLI::App& command) {
  return command.get_parent() == nullptr
             ? command.get_name() + ".1"
             : absl::StrCat(command.get_parent()->get_name(), "-",
                            command.get_name(), ".1");
}

std::string ManPage(const CLI::App& command) {
  const bool tree = command.get_parent() == nullptr;
  return absl::StrCat(Header(command), Synopsis(command), Description(command),
                      Options(command), tree ? TreeSections(command) : "",
                      SeeAlso(command));
}

}  // namespace meridian
