#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

std::vector<std::string> Seeds() {
  return {"/proc/self/exe+0x1139",
          "/bin/true+0x2f30",
          "/dev/null+0x10",
          "/etc/hostname+0xffffffffffffffff",
          "/+0x1",
          "+0x"};
}

TEST(CallsiteSymbolizerFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("callsite", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("callsite")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 500), 3006u);
}

}  // namespace
}  // namespace meridian
