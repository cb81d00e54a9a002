#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

std::vector<std::string> Seeds() {
  return {"bucket=3;phase=fwd;bytes=1048576", "a=;=b;c=-9223372036854775808",
          "name=caf\xC3\xA9;x=1"};
}

TEST(ProbeArgsFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("probe_args", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("probe_args")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 2000), 6003u);
}

}  // namespace
}  // namespace meridian
