#include "cli/help_text.h"

#include <memory>
#include <sstream>
#include <string>

#include "cli/command_tree.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

// A small tree with the conventions of cli/command_tree.h.
std::unique_ptr<CLI::App> DemoTree() {
  auto tree = std::make_unique<CLI::App>("a demo client", "demo");
  tree->footer("Talks to a demo server.");
  tree->set_help_flag("-h,--help", "print this help and exit");
  const std::string server = "the server";
  tree->add_option("--server", server)
      ->type_name("HOST")
      ->envname("DEMO_SERVER")
      ->default_str("localhost");
  CLI::App* get = tree->add_subcommand("get", "fetch things");
  get->footer(
      "Fetches each PATH from the server and prints it, one after the other, "
      "in the order given.");
  const std::string name = "the thing's name";
  const std::string json = "print JSON";
  const std::string paths = "what to fetch";
  const std::string format = "a format with a name too long for the column";
  get->add_option("--name", name)->type_name("N")->required();
  get->add_flag("--json", json);
  get->add_option("--format", format)->type_name("plain|json|yaml|toml");
  get->add_option("paths", paths)->type_name("PATH...")->required();
  return tree;
}

TEST(HelpTextTest, TheTree) {
  auto tree = DemoTree();
  EXPECT_EQ(HelpText(*tree),
            "usage: demo [--server HOST] COMMAND [flags]\n"
            "\n"
            "a demo client\n"
            "\n"
            "Talks to a demo server.\n"
            "\n"
            "commands:\n"
            "  get  fetch things\n"
            "\n"
            "flags:\n"
            "  --server HOST  the server (default $DEMO_SERVER, else "
            "localhost)\n"
            "  -h, --help     print this help and exit\n"
            "\n"
            "`demo help COMMAND` or `demo COMMAND --help`: a command's "
            "flags.\n");
}

TEST(HelpTextTest, ACommand) {
  auto tree = DemoTree();
  EXPECT_EQ(HelpText(*FindCommand(*tree, "get")),
            "usage: demo get --name N [flags] PATH...\n"
            "\n"
            "fetch things\n"
            "\n"
            "Fetches each PATH from the server and prints it, one after the "
            "other, in the\n"
            "order given.\n"
            "\n"
            "flags:\n"
            "  --name N    the thing's name\n"
            "  --json      print JSON\n"
            "  --format plain|json|yaml|toml\n"
            "              a format with a name too long for the column\n"
            "  -h, --help  print this help and exit\n"
            "\n"
            "arguments:\n"
            "  PATH...  what to fetch\n"
            "\n"
            "demo's flag --server HOST may come before or after get.\n");
}

TEST(HelpTextTest, MeridiansHelpStartsWithTheSynopsisAndFitsTheTerminal) {
  auto tree = MeridianCommandTree();
  std::vector<const CLI::App*> pages = VisibleCommands(*tree);
  pages.push_back(tree.get());
  for (const CLI::App* page : pages) {
    const std::string help = HelpText(*page);
    EXPECT_EQ(help.rfind("usage: " + CommandSynopsis(*page) + "\n\n", 0), 0u)
        << help;
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), 79u) << line;
    }
  }
}

}  // namespace
}  // namespace meridian
