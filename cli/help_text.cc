#include "cli/help_text.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/command_tree.h"

namespace meridian {
namespace {

constexpr size_t kWidth = 79;
// The left column of a list grows to fit its longest name, up to this;
// a longer name puts its help on the next line.
constexpr size_t kMaxNameColumn = 26;

// `text` in lines of at most `width` characters (a longer word alone).
std::vector<std::string> Wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// A paragraph, wrapped, and a blank line after it.
std::string Paragraph(const std::string& text) {
  std::string out;
  for (const std::string& line : Wrap(text, kWidth)) {
    absl::StrAppend(&out, line, "\n");
  }
  return out.empty() ? out : out + "\n";
}

// "title:" and its entries: names on the left, help on the right.
std::string List(
    const std::string& title,
    const std::vector<std::pair<std::string, std::string>>& entries) {
  size_t column = 0;
  for (const auto& [name, help] : entries) {
    if (name.size() + 4 <= kMaxNameColumn) {
      column = std::max(column, name.size() + 4);
    }
  }
  std::string out = title + ":\n";
  for (const auto& [name, help] : entries) {
    std::string line = "  " + name;
    const std::vector<std::string> lines = Wrap(help, kWidth - column);
    if (line.size() + 2 > column) {
      out += line + "\n";
      line.clear();
    }
    for (const std::string& text : lines) {
      line.resize(column, ' ');
      out += line + text + "\n";
      line.clear();
    }
    if (lines.empty() && !line.empty()) out += line + "\n";
  }
  return out + "\n";
}

std::vector<std::pair<std::string, std::string>> Entries(
    const std::vector<const CLI::Option*>& options) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const CLI::Option* option : options) {
    entries.emplace_back(OptionNames(*option), OptionHelp(*option));
  }
  return entries;
}

// The command's flags, then its arguments if it has any.
std::string Options(const CLI::App& command) {
  const std::vector<const CLI::Option*> positionals =
      CommandPositionals(command);
  return List("flags", Entries(CommandFlags(command))) +
         (positionals.empty() ? "" : List("arguments", Entries(positionals)));
}

std::string TreeHelp(const CLI::App& tree) {
  std::vector<std::pair<std::string, std::string>> commands;
  for (const CLI::App* command : VisibleCommands(tree)) {
    commands.emplace_back(command->get_name(), command->get_description());
  }
  const std::string name = tree.get_name();
  return absl::StrCat(
      "usage: ", CommandSynopsis(tree), "\n\n",
      Paragraph(tree.get_description()), Paragraph(tree.get_footer()),
      List("commands", commands), Options(tree),
      Paragraph(absl::StrCat("`", name, " help COMMAND` or `", name,
                             " COMMAND --help`: a command's "
                             "flags.")));
}

std::string CommandHelp(const CLI::App& command) {
  const CLI::App& tree = *command.get_parent();
  // The tree's value flags (--collector) serve every command.
  std::string shared;
  for (const CLI::Option* flag : CommandFlags(tree)) {
    if (!TakesValue(*flag)) continue;
    absl::StrAppend(&shared, shared.empty() ? "" : ", ", FlagSynopsis(*flag));
  }
  return absl::StrCat("usage: ", CommandSynopsis(command), "\n\n",
                      Paragraph(command.get_description()),
                      Paragraph(command.get_footer()), Options(command),
                      shared.empty() ? ""
                                     : Paragraph(absl::StrCat(
                                           tree.get_name(), "'s flag ", shared,
                                           " may come before or after ",
                                           command.get_name(), ".")));
}

}  // namespace

std::string HelpText(const CLI::App& command) {
  std::string text = command.get_parent() == nullptr ? TreeHelp(command)
                                                     : CommandHelp(command);
  text.pop_back();  // the last paragraph's blank line
  return text;
}

}  // namespace meridian
