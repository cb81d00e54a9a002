#include "cli/command_parse.h"

#include <stdlib.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/command_tree.h"
#include "common/version.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

using Action = ParsedArgs::Action;

class CommandParseTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("MERIDIAN_COLLECTOR"); }
  void TearDown() override { unsetenv("MERIDIAN_COLLECTOR"); }

  ParsedArgs Parse(std::vector<std::string> words) {
    words.insert(words.begin(), "meridian");
    return ParseArgs(*tree_, words);
  }

  // The usage error `words` make: "command|message".
  std::string Refusal(std::vector<std::string> words) {
    const ParsedArgs parsed = Parse(std::move(words));
    EXPECT_EQ(parsed.action, Action::kUsageError) << parsed.command;
    return parsed.command + "|" + parsed.message;
  }

  std::unique_ptr<CLI::App> tree_ = MeridianCommandTree();
};

TEST_F(CommandParseTest, ACommandGetsItsFlagsByLongName) {
  const ParsedArgs parsed =
      Parse({"export", "--job", "a", "-o", "t.json", "--split-by", "step", "10",
             "--raw-clock", "--steps", "1:2"});
  ASSERT_EQ(parsed.action, Action::kRun) << parsed.message;
  EXPECT_EQ(parsed.command, "export");
  EXPECT_EQ(parsed.collector, "127.0.0.1:7070");
  EXPECT_EQ(parsed.line.Get("job"), "a");
  EXPECT_EQ(parsed.line.Get("output"), "t.json");
  EXPECT_EQ(parsed.line.GetAll("split-by"),
            (std::vector<std::string>{"step", "10"}));
  EXPECT_TRUE(parsed.line.Has("raw-clock"));
  EXPECT_EQ(parsed.line.GetAll("raw-clock"), std::vector<std::string>{""});
  EXPECT_EQ(parsed.line.Get("steps"), "1:2");
  EXPECT_FALSE(parsed.line.Has("critical-path"));
  EXPECT_TRUE(parsed.line.positional().empty());
}

TEST_F(CommandParseTest, ValuesMayStartWithADashOrFollowAnEqualsSign) {
  const ParsedArgs parsed =
      Parse({"stragglers", "--job=x", "--head", "-1", "--json"});
  ASSERT_EQ(parsed.action, Action::kRun) << parsed.message;
  EXPECT_EQ(parsed.line.Get("job"), "x");
  EXPECT_EQ(parsed.line.Get("head"), "-1");
}

// Job names and name globs travel as the requests' strings: text that is
// not UTF-8 is refused here, saying so, rather than failing in protobuf.
TEST_F(CommandParseTest, AJobNameOrNameGlobThatIsNotUtf8IsRefused) {
  EXPECT_EQ(Refusal({"stats", "--job", "bad\xff\xfename"}),
            "stats|--job \"bad\xEF\xBF\xBD\xEF\xBF\xBDname\" is not valid "
            "UTF-8");
  EXPECT_EQ(Refusal({"stats", "--job", "ok", "--name", "MPI_\xc3"}),
            "stats|--name \"MPI_\xEF\xBF\xBD\" is not valid UTF-8");
  // Paths need not be UTF-8.
  const ParsedArgs parsed =
      Parse({"export", "--job", "caf\xc3\xa9", "-o", "t\xff.json"});
  ASSERT_EQ(parsed.action, Action::kRun) << parsed.message;
  EXPECT_EQ(parsed.line.Get("job"), "caf\xc3\xa9");
}

TEST_F(CommandParseTest, CompareKeepsBothJobsOtherFlagsTheLast) {
  ParsedArgs parsed = Parse({"compare", "--job", "a", "--job", "b"});
  ASSERT_EQ(parsed.action, Action::kRun) << parsed.message;
  EXPECT_EQ(parsed.line.GetAll("job"), (std::vector<std::string>{"a", "b"}));
  parsed = Parse({"stats", "--job", "a", "--job", "b"});
  ASSERT_EQ(parsed.action, Action::kRun) << parsed.message;
  EXPECT_EQ(parsed.line.Get("job"), "b");
}

TEST_F(CommandParseTest, CollectorFromTheFlagBeforeOrAfterElseTheEnvironment) {
  EXPECT_EQ(Parse({"--collector", "h:1", "jobs"}).collector, "h:1");
  EXPECT_EQ(Parse({"jobs", "--collector", "h:2"}).collector, "h:2");
  setenv("MERIDIAN_COLLECTOR", "env:3", 1);
  EXPECT_EQ(Parse({"jobs"}).collector, "env:3");
  EXPECT_EQ(Parse({"--collector", "h:1", "jobs"}).collector, "h:1");
  setenv("MERIDIAN_COLLECTOR", "", 1);
  EXPECT_EQ(Parse({"jobs"}).collector, "127.0.0.1:7070");
}

TEST_F(CommandParseTest, RequestTimeoutBeforeOrAfterTheCommandElse600) {
  EXPECT_EQ(Parse({"jobs"}).request_timeout_s, 600);
  EXPECT_EQ(Parse({"--request-timeout", "5", "jobs"}).request_timeout_s, 5);
  EXPECT_EQ(Parse({"export", "--job", "j", "-o", "t.json", "--request-timeout",
                   "86400"})
                .request_timeout_s,
            86400);
  // trace's own --timeout (the wait for the agents) is another flag.
  const ParsedArgs trace = Parse({"trace", "--job", "j", "--steps", "1",
                                  "--timeout", "3", "--request-timeout", "7"});
  ASSERT_EQ(trace.action, Action::kRun) << trace.message;
  EXPECT_EQ(trace.line.Get("timeout"), "3");
  EXPECT_EQ(trace.request_timeout_s, 7);
  for (const char* bad : {"0", "86401", "-1", "1.5", "soon"}) {
    EXPECT_EQ(Refusal({"--request-timeout", bad, "jobs"}),
              "jobs|--request-timeout must be seconds (1 to 86400)")
        << bad;
  }
}

TEST_F(CommandParseTest, RunTakesEverythingAfterDashesUntouched) {
  const ParsedArgs parsed =
      Parse({"run", "--job", "j", "--append", "--", "./app", "-o", "out",
             "--job", "k", "--", "jobs", "--help"});
  ASSERT_EQ(parsed.action, Action::kRun) << parsed.message;
  EXPECT_EQ(parsed.line.Get("job"), "j");
  EXPECT_TRUE(parsed.line.Has("append"));
  EXPECT_EQ(parsed.line.positional(),
            (std::vector<std::string>{"./app", "-o", "out", "--job", "k", "--",
                                      "jobs", "--help"}));
}

TEST_F(CommandParseTest, RunWithoutDashesIsRefused) {
  EXPECT_EQ(Refusal({"run", "./app", "-o", "out"}),
            "run|run needs -- before the command: meridian run [flags] -- "
            "CMD...");
  EXPECT_EQ(Refusal({"run", "./app"}),
            "run|run needs -- before the command: meridian run [flags] -- "
            "CMD...");
  EXPECT_EQ(Refusal({"run", "--job", "j", "--"}), "run|run needs -- CMD...");
  EXPECT_EQ(Refusal({"run", "--bogus", "--", "true"}),
            "run|run: unknown flag --bogus");
}

TEST_F(CommandParseTest, ImportTakesPathsEvenWhenTheyNameCommands) {
  const ParsedArgs parsed =
      Parse({"import", "--job", "j", "a.json", "jobs", "--rank", "3"});
  ASSERT_EQ(parsed.action, Action::kRun) << parsed.message;
  EXPECT_EQ(parsed.line.positional(),
            (std::vector<std::string>{"a.json", "jobs"}));
  EXPECT_EQ(parsed.line.Get("rank"), "3");
  EXPECT_EQ(Refusal({"import", "--job", "j"}), "import|import needs PATH...");
}

TEST_F(CommandParseTest, AFlagOfAnotherCommandIsRefusedSayingWhoseItIs) {
  EXPECT_EQ(Refusal({"critical-path", "--job", "j", "--steps", "10"}),
            "critical-path|critical-path: unknown flag --steps (a flag of "
            "trace, export, stats, waits, replay)");
  // Even with --job missing: the unknown flag is said first.
  EXPECT_EQ(Refusal({"critical-path", "--steps", "10"}),
            "critical-path|critical-path: unknown flag --steps (a flag of "
            "trace, export, stats, waits, replay)");
  EXPECT_EQ(Refusal({"jobs", "--job", "j"}),
            "jobs|jobs: unknown flag --job (a flag of run, import, trace, "
            "delete, export, stats, clocks, critical-path, stragglers, waits, "
            "health, steps, compare, graph, replay, sql)");
  EXPECT_EQ(Refusal({"stats", "--job", "j", "--bogus=1"}),
            "stats|stats: unknown flag --bogus");
  EXPECT_EQ(Refusal({"stats", "--job", "j", "-x"}),
            "stats|stats: unknown flag -x");
  EXPECT_EQ(Refusal({"stats", "--job", "j", "extra"}),
            "stats|stats: unexpected argument \"extra\"");
}

TEST_F(CommandParseTest, MissingFlagsAndValuesAreNamed) {
  EXPECT_EQ(Refusal({"stats", "--json"}), "stats|stats needs --job J");
  EXPECT_EQ(Refusal({"graph", "--job", "j", "--step", "1"}),
            "graph|graph needs -o FILE");
  EXPECT_EQ(Refusal({"stats", "--job"}), "stats|stats: --job needs a value");
  EXPECT_EQ(Refusal({"stats", "--job", "j", "--json=1"}),
            "stats|stats: --json takes no value");
  EXPECT_EQ(Refusal({"completion"}), "completion|completion needs bash");
}

TEST_F(CommandParseTest, NoCommandOrAnUnknownOne) {
  EXPECT_EQ(Refusal({}), "|no command given");
  EXPECT_EQ(Refusal({"--collector", "h:1"}), "|no command given");
  EXPECT_EQ(Refusal({"nope"}), "|unknown command \"nope\"");
  EXPECT_EQ(Refusal({"--bogus", "jobs"}), "jobs|jobs: unknown flag --bogus");
  EXPECT_EQ(Refusal({"help", "nope"}), "|unknown command \"nope\"");
}

TEST_F(CommandParseTest, HelpInEveryForm) {
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{
           {"-h"}, {"--help"}, {"help"}, {"--collector", "h:1", "--help"}}) {
    const ParsedArgs parsed = Parse(words);
    EXPECT_EQ(parsed.action, Action::kHelp) << words[0];
    EXPECT_EQ(parsed.command, "") << words[0];
  }
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"help", "export"},
                                             {"export", "-h"},
                                             {"export", "--help"},
                                             {"export", "--bogus", "--help"},
                                             {"-h", "export"}}) {
    const ParsedArgs parsed = Parse(words);
    EXPECT_EQ(parsed.action, Action::kHelp) << words[0] << words[1];
    EXPECT_EQ(parsed.command, "export") << words[0] << words[1];
  }
  EXPECT_EQ(Parse({"run", "--help"}).action, Action::kHelp);
  EXPECT_EQ(Parse({"run", "--", "./app", "--help"}).action, Action::kRun);
}

TEST_F(CommandParseTest, Version) {
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"--version"},
                                             {"jobs", "--version"}}) {
    const ParsedArgs parsed = Parse(words);
    EXPECT_EQ(parsed.action, Action::kVersion);
    EXPECT_EQ(parsed.message, std::string("meridian ") + kVersion);
  }
}

TEST_F(CommandParseTest, TheTreeParsesAgain) {
  EXPECT_EQ(Parse({"stats", "--job", "a", "--json"}).action, Action::kRun);
  const ParsedArgs parsed = Parse({"stats", "--job", "b"});
  EXPECT_EQ(parsed.line.GetAll("job"), std::vector<std::string>{"b"});
  EXPECT_FALSE(parsed.line.Has("json"));
}

}  // namespace
}  // namespace meridian
