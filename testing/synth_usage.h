// The meridian-synth command line: its usage text (--help) and the flags its
// parser takes. One definition for the program, its man page (help2man, at
// deploy/install.sh) and the test that holds docs/cli.md to them
// (tests/daemon_docs_test.cc).
#ifndef MERIDIAN_TESTING_SYNTH_USAGE_H_
#define MERIDIAN_TESTING_SYNTH_USAGE_H_

#include <string>
#include <vector>

namespace meridian {

// What --help prints: the synopsis (the forms, up to the first blank line),
// then what each flag does.
extern const char kSynthUsage[];

// The flags the parser takes, without their dashes: with a value, and
// switches.
const std::vector<std::string>& SynthValueFlags();
const std::vector<std::string>& SynthSwitches();

}  // namespace meridian

#endif  // MERIDIAN_TESTING_SYNTH_USAGE_H_
