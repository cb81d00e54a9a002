#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

std::vector<std::string> Seeds() {
  return {
      "cpu  2189353 3777 529130 4293783 15205 0 5948 126011 0 0\n"
      "cpu0 1 2 3 4 5 6 7 8 0 0\n",
      "MemTotal:       24588304 kB\nMemFree:         1 kB\n"
      "MemAvailable:   20000000 kB\n",
      "18446744073709551615\n"};
}

TEST(NodeCountersFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("node_counters", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("node_counters")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 2000), 6003u);
}

}  // namespace
}  // namespace meridian
