// The other programs' documents against their command lines: for
// meridian-agent, meridian-collector and meridian-synth, the flags the parser
// takes, those --help names (and with it the man page, which help2man makes
// from --help), and those docs/cli.md and docs/agent.md give, are one list.
// (The meridian CLI's own check is cli/cli_docs_test.cc.)
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/agent_usage.h"
#include "collector/collector_usage.h"
#include "gtest/gtest.h"
#include "testing/file_text.h"
#include "testing/runfile.h"
#include "testing/synth_usage.h"

namespace meridian {
namespace {

std::string Read(const std::string& path) { return FileText(Runfile(path)); }

// Every --name in `text`.
std::set<std::string> Flags(const std::string& text) {
  static const std::regex flag("--([a-z][a-z0-9-]*)");
  std::set<std::string> flags;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag);
       it != std::sregex_iterator(); ++it) {
    flags.insert((*it)[1]);
  }
  return flags;
}

std::set<std::string> ParserFlags(const std::vector<std::string>& values,
                                  const std::vector<std::string>& switches) {
  std::set<std::string> flags(values.begin(), values.end());
  flags.insert(switches.begin(), switches.end());
  return flags;
}

// The section of a Markdown page under "## heading", to the next "## ".
std::string Section(const std::string& page, const std::string& heading) {
  const std::string start = "\n## " + heading + "\n";
  const size_t begin = page.find(start);
  if (begin == std::string::npos) return "";
  const size_t end = page.find("\n## ", begin + start.size());
  return page.substr(begin, end == std::string::npos ? end : end - begin);
}

// The section's first code: a ``` block or a `span`.
std::string FirstCode(const std::string& section) {
  const size_t tick = section.find('`');
  if (tick == std::string::npos) return "";
  if (section.compare(tick, 3, "```") == 0) {
    const size_t end = section.find("```", tick + 3);
    return section.substr(tick + 3, end - tick - 3);
  }
  const size_t end = section.find('`', tick + 1);
  return section.substr(tick + 1, end - tick - 1);
}

// The first form of a synopsis: from the program's name to the line that
// names it again (or the first blank line).
std::string FirstForm(const std::string& text, const std::string& program) {
  const size_t begin = text.find(program);
  if (begin == std::string::npos) return "";
  size_t end = text.size();
  const size_t blank = text.find("\n\n", begin);
  if (blank != std::string::npos) end = blank;
  for (size_t line = text.find('\n', begin);
       line != std::string::npos && line < end;
       line = text.find('\n', line + 1)) {
    const size_t word = text.find_first_not_of(' ', line + 1);
    if (word != std::string::npos &&
        text.compare(word, program.size(), program) == 0) {
      end = line;
      break;
    }
  }
  return text.substr(begin, end - begin);
}

struct Daemon {
  std::string program;
  const char* usage;
  std::set<std::string> parser;
};

std::vector<Daemon> Daemons() {
  return {{"meridian-agent", kAgentUsage,
           ParserFlags(AgentValueFlags(), AgentSwitches())},
          {"meridian-collector", kCollectorUsage,
           ParserFlags(CollectorValueFlags(), CollectorSwitches())},
          {"meridian-synth", kSynthUsage,
           ParserFlags(SynthValueFlags(), SynthSwitches())}};
}

TEST(DaemonDocsTest, HelpNamesEveryFlagTheParserTakesAndNoOther) {
  for (const Daemon& d : Daemons()) {
    EXPECT_EQ(Flags(d.usage), d.parser) << d.program << " --help";
  }
}

TEST(DaemonDocsTest, CliPageNamesEveryFlagAndItsSynopsisIsTheHelps) {
  const std::string page = Read("docs/cli.md");
  for (const Daemon& d : Daemons()) {
    const std::string section = Section(page, d.program);
    ASSERT_FALSE(section.empty()) << "docs/cli.md has no ## " << d.program;
    EXPECT_EQ(Flags(section), d.parser)
        << "docs/cli.md's " << d.program << " section";
    EXPECT_EQ(Flags(FirstForm(FirstCode(section), d.program)),
              Flags(FirstForm(d.usage, d.program)))
        << "docs/cli.md's " << d.program << " synopsis against --help's";
  }
}

TEST(DaemonDocsTest, AgentPageSynopsisIsTheHelps) {
  const std::string section = Section(Read("docs/agent.md"), "meridian-agent");
  ASSERT_FALSE(section.empty());
  EXPECT_EQ(Flags(FirstForm(FirstCode(section), "meridian-agent")),
            Flags(FirstForm(kAgentUsage, "meridian-agent")));
}

// The helpers themselves, on a page of their form.
TEST(DaemonDocsTest, ReadsASectionsSynopsisAsThePagesWrite) {
  const std::string page =
      "# x\n\n## prog\n`prog --a N [--b]\n[--c]` then --d.\n\n## other\n--e\n";
  const std::string section = Section(page, "prog");
  EXPECT_EQ(Flags(section), (std::set<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(FirstCode(section), "prog --a N [--b]\n[--c]");
  const std::string usage =
      "usage: prog --a N\n            [--b]\n       prog --z\n\n  --a  x\n";
  EXPECT_EQ(Flags(FirstForm(usage, "prog")), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(FirstCode("```\nprog --a\nprog --b\n```"),
            "\nprog --a\nprog --b\n");
  EXPECT_EQ(Flags(FirstForm("\nprog --a\nprog --b\n", "prog")),
            (std::set<std::string>{"a"}));
}

}  // namespace
}  // namespace meridian
