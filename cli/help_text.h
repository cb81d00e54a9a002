// `meridian --help`, `meridian help CMD` and `meridian CMD --help`: the
// help of the command tree (cli/command_tree.h) or of one command, as text
// for a terminal (79 columns). Usage errors print it too, after the
// reason.
//
// A command's help:
//   usage: meridian graph --job J --step N -o FILE [flags]
//
//   write a step's dependency graph
//
//   Step N's dependency graph as DOT or GraphML ...
//
//   flags:
//     --job J            the job (`meridian jobs` lists them)
//     ...
//     -h, --help         print this help and exit
//
//   meridian's flag --collector HOST:PORT may come before or after graph.
#ifndef MERIDIAN_CLI_HELP_TEXT_H_
#define MERIDIAN_CLI_HELP_TEXT_H_

#include <string>

#include "CLI/CLI.hpp"

namespace meridian {

// The help of `command`: the tree itself (its commands and flags) or one
// of its commands.
std::string HelpText(const CLI::App& command);

}  // namespace meridian

#endif  // MERIDIAN_CLI_HELP_TEXT_H_
