// The meridian-collector command line: its usage text (--help) and the flags
// its parser takes. One definition for the program, its man page (help2man, at
// deploy/install.sh) and the test that holds docs/cli.md and the program's
// page to them (tests/daemon_docs_test.cc).
#ifndef MERIDIAN_COLLECTOR_COLLECTOR_USAGE_H_
#define MERIDIAN_COLLECTOR_COLLECTOR_USAGE_H_

#include <string>
#include <vector>

namespace meridian {

// What --help prints: the synopsis (the forms, up to the first blank line),
// then every flag with what it does.
extern const char kCollectorUsage[];

// The flags the parser takes, without their dashes: with a value, and
// switches.
const std::vector<std::string>& CollectorValueFlags();
const std::vector<std::string>& CollectorSwitches();

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_COLLECTOR_USAGE_H_
