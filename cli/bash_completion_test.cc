#include "cli/bash_completion.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/command_tree.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

std::unique_ptr<CLI::App> DemoTree() {
  auto tree = std::make_unique<CLI::App>("a demo client", "demo-cli");
  tree->set_help_flag("-h,--help", "help");
  const std::string help = "help";
  tree->add_option("--server", help)->type_name("HOST");
  CLI::App* get = tree->add_subcommand("get", "fetch");
  get->fallthrough();
  get->add_option("--name", help)->type_name("N");
  get->add_option("--format", help)->type_name("plain|json");
  get->add_option("-o,--output", help)->type_name("FILE");
  get->add_flag("--json", help);
  get->add_option("paths", help)->type_name("PATH...");
  CLI::App* gc = tree->add_subcommand("gc", "collect");
  gc->add_option("--dir", help)->type_name("DIR");
  CLI::App* exec = tree->add_subcommand("exec", "run");
  exec->add_option("command", help)->type_name("-- CMD...");
  CLI::App* hidden = tree->add_subcommand("secret", "");
  hidden->group("");
  return tree;
}

class BashCompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(getenv("TEST_TMPDIR")) + "/completion";
    mkdir(dir_.c_str(), 0700);
    mkdir((dir_ + "/out").c_str(), 0700);
    std::ofstream(dir_ + "/out/a.json") << "";
    std::ofstream(dir_ + "/script") << BashCompletion(*DemoTree());
  }

  // COMPREPLY after completing the last of `words`, joined by "|".
  std::string Complete(const std::vector<std::string>& words) {
    std::string words_list;
    for (const std::string& word : words) words_list += " '" + word + "'";
    std::ofstream(dir_ + "/case.sh")
        << "cd '" << dir_ << "' || exit 1\n"
        << "source ./script\n"
        << "COMP_WORDS=(" << words_list << ")\n"
        << "COMP_CWORD=" << words.size() - 1 << "\n"
        << "_demo_cli\n"
        << "IFS='|'\n"
        << "echo \"${COMPREPLY[*]}\"\n";
    FILE* bash = popen(("bash '" + dir_ + "/case.sh'").c_str(), "r");
    std::string out;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), bash)) > 0) {
      out.append(buffer, n);
    }
    EXPECT_EQ(pclose(bash), 0) << words_list;
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  std::string dir_;
};

TEST_F(BashCompletionTest, CommandsFlagsAndValues) {
  EXPECT_EQ(Complete({"demo-cli", ""}), "get|gc|exec");
  EXPECT_EQ(Complete({"demo-cli", "g"}), "get|gc");
  EXPECT_EQ(Complete({"demo-cli", "-"}), "--server|-h|--help");
  EXPECT_EQ(Complete({"demo-cli", "--server", "h", "get", "--"}),
            "--name|--format|--output|--json|--help");
  EXPECT_EQ(Complete({"demo-cli", "get", "--format", ""}), "plain|json");
  EXPECT_EQ(Complete({"demo-cli", "get", "--name", ""}), "");
  EXPECT_EQ(Complete({"demo-cli", "--server", ""}), "");
  EXPECT_EQ(Complete({"demo-cli", "get", "-o", "out/a"}), "out/a.json");
  EXPECT_EQ(Complete({"demo-cli", "get", "out/"}), "out/a.json");
  EXPECT_EQ(Complete({"demo-cli", "gc", "--dir", "o"}), "out");
  EXPECT_EQ(Complete({"demo-cli", "exec", ""}), "--");
  EXPECT_EQ(Complete({"demo-cli", "exec", "--", "./x", "out/"}), "out/a.json");
  EXPECT_EQ(Complete({"demo-cli", "secret", ""}), "");
}

}  // namespace
}  // namespace meridian
