// docs/cli.md against the parser (cli/command_tree.h), so that neither
// drifts from the other:
//   - the `meridian` part (from "## meridian" to the next "## ") documents
//     meridian's own flags before its first command section;
//   - every command has a section "### meridian COMMAND ..." that names each
//     of its flags (but -h/--help, which every command has);
//   - a section's heading names only flags of its command;
//   - every flag the part names is one the parser has (flags of other
//     programs, in code spans that start with their name, `meridian-agent
//     ...`, aside).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "cli/command_tree.h"
#include "gtest/gtest.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

std::string ReadDoc() {
  return FileText(std::string(getenv("TEST_SRCDIR")) + "/meridian/docs/cli.md");
}

// The lines from "## meridian" up to the next level-2 heading.
std::vector<std::string> MeridianPart(const std::string& doc) {
  std::vector<std::string> part;
  bool in = false;
  for (const std::string& line :
       std::vector<std::string>(absl::StrSplit(doc, '\n'))) {
    if (absl::StartsWith(line, "## ")) {
      in = line == "## meridian";
      continue;
    }
    if (in) part.push_back(line);
  }
  return part;
}

bool FlagChar(char c) {
  return isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

// The flags `text` names: "--word" and "-x" tokens not inside a longer word.
std::set<std::string> FlagsIn(const std::string& text) {
  std::set<std::string> flags;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '-' || (i > 0 && FlagChar(text[i - 1]))) continue;
    size_t end = i + 1;
    if (end < text.size() && text[end] == '-') ++end;
    const size_t name = end;
    while (end < text.size() && FlagChar(text[end])) ++end;
    if (end > name && isalpha(static_cast<unsigned char>(text[name]))) {
      flags.insert(text.substr(i, end - i));
    }
    i = end;
  }
  return flags;
}

// `text` without the code spans that start with another program's name
// ("`meridian-collector --retention-days N`").
std::string WithoutOtherPrograms(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find("`meridian-", at);
    if (open == std::string::npos) break;
    const size_t close = text.find('`', open + 1);
    out += text.substr(at, open - at);
    at = close == std::string::npos ? text.size() : close + 1;
  }
  return out + text.substr(std::min(at, text.size()));
}

std::vector<std::string> Names(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const std::string& name : option.get_snames())
    names.push_back("-" + name);
  for (const std::string& name : option.get_lnames()) {
    names.push_back("--" + name);
  }
  return names;
}

class CliDocsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string section = "";
    for (const std::string& line : MeridianPart(ReadDoc())) {
      if (absl::StartsWith(line, "### ")) {
        section = line;
        headings_[section] = line;
      }
      text_[section] += WithoutOtherPrograms(line) + "\n";
    }
  }

  // The section of `command`: its heading is "### meridian COMMAND" and
  // maybe a synopsis.
  std::string SectionOf(const std::string& command) const {
    const std::string heading = "### meridian " + command;
    for (const auto& [section, line] : headings_) {
      if (line == heading || absl::StartsWith(line, heading + " ")) {
        return section;
      }
    }
    return "";
  }

  std::unique_ptr<CLI::App> tree_ = MeridianCommandTree();
  std::map<std::string, std::string> headings_;  // section -> heading line
  std::map<std::string, std::string> text_;      // "" : before the first
};

TEST_F(CliDocsTest, MeridiansOwnFlagsBeforeTheCommands) {
  const std::set<std::string> named = FlagsIn(text_[""]);
  for (const CLI::Option* flag : CommandFlags(*tree_)) {
    for (const std::string& name : Names(*flag)) {
      EXPECT_EQ(named.count(name), 1u) << name << " is not in docs/cli.md";
    }
  }
}

TEST_F(CliDocsTest, EveryCommandHasASectionNamingEachOfItsFlags) {
  for (const CLI::App* command : VisibleCommands(*tree_)) {
    const std::string section = SectionOf(command->get_name());
    ASSERT_FALSE(section.empty())
        << "docs/cli.md has no \"### meridian " << command->get_name() << "\"";
    const std::set<std::string> named = FlagsIn(text_[section]);
    for (const CLI::Option* flag : CommandFlags(*command)) {
      if (flag == command->get_help_ptr()) continue;
      for (const std::string& name : Names(*flag)) {
        EXPECT_EQ(named.count(name), 1u)
            << "docs/cli.md's section of " << command->get_name()
            << " does not name " << name;
      }
    }
  }
}

TEST_F(CliDocsTest, AHeadingNamesOnlyFlagsOfItsCommand) {
  for (const CLI::App* command : VisibleCommands(*tree_)) {
    const std::string section = SectionOf(command->get_name());
    if (section.empty()) continue;
    const std::string synopsis =
        section.substr(("### meridian " + command->get_name()).size());
    for (const std::string& flag : FlagsIn(synopsis)) {
      EXPECT_NE(command->get_option_no_throw(flag), nullptr)
          << "docs/cli.md's heading \"" << section << "\" names " << flag
          << ", which " << command->get_name() << " does not have";
    }
  }
}

TEST_F(CliDocsTest, EveryFlagNamedIsOneTheParserHas) {
  std::set<std::string> known;
  const CLI::App* tree = tree_.get();
  std::vector<const CLI::App*> commands = {tree};
  for (const CLI::App* command :
       tree->get_subcommands(std::function<bool(const CLI::App*)>())) {
    commands.push_back(command);
  }
  for (const CLI::App* command : commands) {
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& name : Names(*option)) known.insert(name);
    }
  }
  for (const auto& [section, text] : text_) {
    for (const std::string& flag : FlagsIn(text)) {
      EXPECT_EQ(known.count(flag), 1u)
          << "docs/cli.md names " << flag << " (in \"" << section
          << "\"), which no meridian command has";
    }
  }
}

TEST(CliDocsFlagsTest, FlagsIn) {
  EXPECT_EQ(FlagsIn("`--job J` -o FILE [--split-by step|rank N], a-b --x"),
            (std::set<std::string>{"--job", "-o", "--split-by", "--x"}));
  EXPECT_EQ(FlagsIn("--steps, not --step-5 or 1-2 or -- alone"),
            (std::set<std::string>{"--steps", "--step-5"}));
  EXPECT_EQ(WithoutOtherPrograms("a `meridian-collector --db X` b `--job`"),
            "a  b `--job`");
}

}  // namespace
}  // namespace meridian
