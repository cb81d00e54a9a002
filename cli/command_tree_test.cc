#include "cli/command_tree.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

std::vector<std::string> Names(const std::vector<const CLI::App*>& commands) {
  std::vector<std::string> names;
  for (const CLI::App* command : commands) names.push_back(command->get_name());
  return names;
}

std::vector<std::string> Flags(const CLI::App& command) {
  std::vector<std::string> flags;
  for (const CLI::Option* flag : CommandFlags(command)) {
    flags.push_back(OptionNames(*flag));
  }
  return flags;
}

TEST(CommandTreeTest, EveryCommandListedInOrder) {
  auto tree = MeridianCommandTree();
  // completion and man too: a user who installed by hand finds them.
  EXPECT_EQ(Names(VisibleCommands(*tree)),
            (std::vector<std::string>{
                "run",    "import", "trace",  "jobs",          "delete",
                "export", "stats",  "clocks", "critical-path", "stragglers",
                "waits",  "health", "steps",  "compare",       "graph",
                "replay", "sql",    "help",   "completion",    "man"}));
  ASSERT_NE(FindCommand(*tree, "man"), nullptr);
  ASSERT_NE(FindCommand(*tree, "completion"), nullptr);
  EXPECT_EQ(FindCommand(*tree, ""), tree.get());
  EXPECT_EQ(FindCommand(*tree, "nope"), nullptr);
}

TEST(CommandTreeTest, EachCommandHasItsOwnFlags) {
  auto tree = MeridianCommandTree();
  EXPECT_EQ(Flags(*FindCommand(*tree, "critical-path")),
            (std::vector<std::string>{"--job J", "--step N", "--json",
                                      "-h, --help"}));
  EXPECT_EQ(Flags(*FindCommand(*tree, "jobs")),
            (std::vector<std::string>{"--json", "-h, --help"}));
  EXPECT_EQ(
      Flags(*FindCommand(*tree, "run")),
      (std::vector<std::string>{"--job J", "--append", "--on-demand",
                                "--flush-timeout S", "--json", "-h, --help"}));
  EXPECT_EQ(Flags(*tree), (std::vector<std::string>{
                              "--collector HOST:PORT", "--request-timeout S",
                              "--version", "-h, --help"}));
}

TEST(CommandTreeTest, EveryReadCommandHasJson) {
  auto tree = MeridianCommandTree();
  for (const char* name : {"run", "trace", "jobs", "stats", "clocks",
                           "critical-path", "stragglers", "steps", "compare"}) {
    EXPECT_NE(FindCommand(*tree, name)->get_option_no_throw("--json"), nullptr)
        << name;
  }
}

TEST(CommandTreeTest, EveryVisibleCommandAndFlagIsDescribed) {
  auto tree = MeridianCommandTree();
  for (const CLI::App* command : VisibleCommands(*tree)) {
    EXPECT_FALSE(command->get_description().empty()) << command->get_name();
    for (const CLI::Option* option : command->get_options()) {
      EXPECT_FALSE(option->get_description().empty())
          << command->get_name() << " " << OptionNames(*option);
    }
  }
}

TEST(CommandTreeTest, Synopses) {
  auto tree = MeridianCommandTree();
  EXPECT_EQ(CommandSynopsis(*tree),
            "meridian [--collector HOST:PORT] [--request-timeout S] COMMAND "
            "[flags]");
  EXPECT_EQ(CommandSynopsis(*FindCommand(*tree, "graph")),
            "meridian graph --job J --step N -o FILE [flags]");
  EXPECT_EQ(CommandSynopsis(*FindCommand(*tree, "run")),
            "meridian run [flags] -- CMD...");
  EXPECT_EQ(CommandSynopsis(*FindCommand(*tree, "import")),
            "meridian import --job J [flags] PATH...");
  EXPECT_EQ(CommandSynopsis(*FindCommand(*tree, "help")),
            "meridian help [flags] [COMMAND]");
  const CLI::App& exp = *FindCommand(*tree, "export");
  EXPECT_EQ(FlagSynopsis(*exp.get_option("--output")), "-o FILE");
  EXPECT_EQ(OptionNames(*exp.get_option("--output")), "-o, --output FILE");
  EXPECT_EQ(OptionNames(*exp.get_option("--split-by")),
            "--split-by step|rank N");
  EXPECT_FALSE(TakesValue(*exp.get_option("--raw-clock")));
  EXPECT_TRUE(TakesValue(*exp.get_option("--split-by")));
}

TEST(CommandTreeTest, OptionHelpSaysTheDefaultAndItsVariable) {
  auto tree = MeridianCommandTree();
  EXPECT_EQ(OptionHelp(*tree->get_option("--collector")),
            "the collector's address (default $MERIDIAN_COLLECTOR, else "
            "127.0.0.1:7070)");
  EXPECT_EQ(OptionHelp(*tree->get_option("--request-timeout")),
            "seconds to wait for the collector's answer, or for each part of "
            "a streamed one, before giving up (default 600)");
  CLI::App app("demo", "demo");
  const std::string help = "how many";
  EXPECT_EQ(OptionHelp(*app.add_option("--n", help)->default_str("3")),
            "how many (default 3)");
}

}  // namespace
}  // namespace meridian
