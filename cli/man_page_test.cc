#include "cli/man_page.h"

#include <memory>
#include <string>

#include "cli/command_tree.h"
#include "common/version.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

std::unique_ptr<CLI::App> DemoTree() {
  auto tree = std::make_unique<CLI::App>("a demo client", "demo");
  tree->footer("Talks to a demo-server.");
  tree->set_help_flag("-h,--help", "print this help and exit");
  const std::string server = "the server";
  tree->add_option("--server", server)
      ->type_name("HOST")
      ->envname("DEMO_SERVER")
      ->default_str("localhost");
  CLI::App* get = tree->add_subcommand("get", "fetch things");
  get->footer(".dotted and back\\slashed");
  const std::string name = "the thing's name";
  const std::string paths = "what to fetch";
  get->add_option("-n,--name", name)->type_name("N")->required();
  get->add_option("paths", paths)->type_name("PATH...");
  CLI::App* hidden = tree->add_subcommand("secret", "");
  hidden->group("");
  return tree;
}

TEST(ManPageTest, TheTreesPage) {
  auto tree = DemoTree();
  EXPECT_EQ(ManPageName(*tree), "demo.1");
  EXPECT_EQ(ManPage(*tree),
            std::string(".TH DEMO 1 \"\" \"demo ") + kVersion +
                "\" \"Meridian Manual\"\n"
                ".SH NAME\n"
                "demo \\- a demo client\n"
                ".SH SYNOPSIS\n"
                ".B demo\n"
                "[\\-\\-server HOST] COMMAND [flags]\n"
                ".SH DESCRIPTION\n"
                "A demo client.\n"
                ".PP\n"
                "Talks to a demo\\-server.\n"
                ".SH OPTIONS\n"
                ".TP\n"
                ".B \\-\\-server HOST\n"
                "the server (default $DEMO_SERVER, else localhost)\n"
                ".TP\n"
                ".B \\-h, \\-\\-help\n"
                "print this help and exit\n"
                ".SH COMMANDS\n"
                ".TP\n"
                ".B get\n"
                "fetch things\n"
                ".SH ENVIRONMENT\n"
                ".TP\n"
                ".B DEMO_SERVER\n"
                "the default of \\-\\-server HOST where it is not given\n"
                ".SH SEE ALSO\n"
                "demo\\-get(1)\n");
}

TEST(ManPageTest, ACommandsPage) {
  auto tree = DemoTree();
  const CLI::App& get = *FindCommand(*tree, "get");
  EXPECT_EQ(ManPageName(get), "demo-get.1");
  EXPECT_EQ(ManPage(get), std::string(".TH DEMO-GET 1 \"\" \"demo ") +
                              kVersion +
                              "\" \"Meridian Manual\"\n"
                              ".SH NAME\n"
                              "demo\\-get \\- fetch things\n"
                              ".SH SYNOPSIS\n"
                              ".B demo get\n"
                              "\\-n N [flags] [PATH...]\n"
                              ".SH DESCRIPTION\n"
                              "Fetch things.\n"
                              ".PP\n"
                              "\\&.dotted and back\\eslashed\n"
                              ".SH OPTIONS\n"
                              ".TP\n"
                              ".B \\-n, \\-\\-name N\n"
                              "the thing's name\n"
                              ".TP\n"
                              ".B \\-h, \\-\\-help\n"
                              "print this help and exit\n"
                              ".TP\n"
                              ".B PATH...\n"
                              "what to fetch\n"
                              ".SH SEE ALSO\n"
                              "demo(1)\n");
}

}  // namespace
}  // namespace meridian
