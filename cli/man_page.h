// Man pages of the command tree (cli/command_tree.h), in roff (man(7)
// macros): meridian(1) lists the commands and the shared flags, and each
// command has its own page, meridian-CMD(1) (git's convention): NAME,
// SYNOPSIS, DESCRIPTION, OPTIONS, SEE ALSO. `meridian man [CMD]` prints
// one; deploy/install.sh writes them all (`meridian man --dir DIR`).
//
// Example, for a command "steps" with the flags --job J and --json:
//   .TH MERIDIAN-STEPS 1 "" "meridian 0.1.0" "Meridian Manual"
//   .SH NAME
//   meridian\-steps \- iteration time per step and rank
//   .SH SYNOPSIS
//   .B meridian steps \-\-job J [flags]
//   ...
//   .TP
//   .B \-\-job J
//   the job (`meridian jobs` lists them)
#ifndef MERIDIAN_CLI_MAN_PAGE_H_
#define MERIDIAN_CLI_MAN_PAGE_H_

#include <string>

#include "CLI/CLI.hpp"

namespace meridian {

// The page of `command`: the tree's own page for the tree, else the
// command's.
std::string ManPage(const CLI::App& command);

// The page's file name: "meridian.1", "meridian-export.1".
std::string ManPageName(const CLI::App& command);

}  // namespace meridian

#endif  // MERIDIAN_CLI_MAN_PAGE_H_
