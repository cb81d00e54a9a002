#include "common/command_line.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(CommandLineTest, ParsesValuesSwitchesRepeatsAndPositionals) {
  auto line = CommandLine::Parse({"meridian", "export", "--job", "a", "--job=b",
                                  "-o", "--json", "x", "--", "--not-a-flag"},
                                 1, {"job"}, {"json"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->Get("job"), "b");
  EXPECT_EQ(line->GetAll("job"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(line->Has("json"));
  EXPECT_EQ(line->positional(),
            (std::vector<std::string>{"export", "-o", "x", "--not-a-flag"}));
}

TEST(CommandLineTest, RejectsUnknownFlagsAndMissingValues) {
  EXPECT_EQ(CommandLine::Parse({"x", "--nope"}, 1, {}, {}).status().message(),
            "unknown flag --nope; see --help");
  EXPECT_EQ(
      CommandLine::Parse({"x", "--job"}, 1, {"job"}, {}).status().message(),
      "--job needs a value");
  EXPECT_EQ(
      CommandLine::Parse({"x", "--json=1"}, 1, {}, {"json"}).status().message(),
      "--json takes no value");
}

TEST(CommandLineTest, DashHIsHelpWhereHelpIsASwitch) {
  auto line = CommandLine::Parse({"x", "-h"}, 1, {}, {"help"});
  ASSERT_TRUE(line.ok());
  EXPECT_TRUE(line->Has("help"));
  EXPECT_TRUE(line->positional().empty());
  line = CommandLine::Parse({"x", "-h"}, 1, {}, {});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->positional(), std::vector<std::string>{"-h"});
}

TEST(CommandLineTest, FromValuesKeepsWhatItIsGiven) {
  CommandLine line =
      CommandLine::FromValues({{"job", {"a", "b"}}, {"json", {""}}}, {"PATH"});
  EXPECT_EQ(line.Get("job"), "b");
  EXPECT_EQ(line.GetAll("job"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(line.Has("json"));
  EXPECT_FALSE(line.Has("ranks"));
  EXPECT_EQ(line.positional(), std::vector<std::string>{"PATH"});
}

TEST(CommandLineTest, GetIntNamesTheFlag) {
  auto line = CommandLine::Parse({"x", "--ranks", "four"}, 1, {"ranks"}, {});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->GetInt("ranks", 1).status().message(),
            "--ranks wants an integer, not \"four\"");
  EXPECT_EQ(*line->GetInt("steps", 7), 7);
}

}  // namespace
}  // namespace meridian
