// FuzzReplay: runs a libFuzzer entry point (LLVMFuzzerTestOneInput) as a
// unit test, with no fuzzing engine: over every file of its checked-in
// corpus (fuzz/corpus/NAME/) and over deterministic mutations of each
// (byte changes, cuts, insertions; a fixed random seed). So every CI run
// exercises the parser's error paths; tests/fuzz.sh runs the real thing
// (clang, -fsanitize=fuzzer) for longer.
//
// With MERIDIAN_WRITE_SEEDS=DIR set, a test's seeds are also written
// there: that is how the corpus was made.
#ifndef MERIDIAN_TESTING_FUZZ_REPLAY_H_
#define MERIDIAN_TESTING_FUZZ_REPLAY_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace meridian {

using FuzzTarget = int (*)(const uint8_t* data, size_t size);

// The files of fuzz/corpus/`name` (a runfiles path under bazel).
std::vector<std::string> FuzzCorpus(const std::string& name);

// Applies 1 to 4 random edits to `bytes` (a byte changed, bytes cut or
// inserted, 8 bytes set to an integer's edge value); "x" if it empties.
void Mutate(std::mt19937* rng, std::string* bytes);

// Feeds each input, then `rounds` mutations of each, to `target`.
// Returns how many inputs were fed.
size_t FuzzReplay(FuzzTarget target, const std::vector<std::string>& inputs,
                  int rounds);

// Writes `seeds` to $MERIDIAN_WRITE_SEEDS/`name`/seed-N if it is set.
void WriteSeeds(const std::string& name, const std::vector<std::string>& seeds);

}  // namespace meridian

#endif  // MERIDIAN_TESTING_FUZZ_REPLAY_H_
