#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

// The batch validator's seeds are batches too.
TEST(BatchShapeFuzzTest, CorpusAndMutationsNeverCrash) {
  std::vector<std::string> inputs = FuzzCorpus("batch_validator");
  ASSERT_FALSE(inputs.empty());
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 3000),
            3001u * inputs.size());
}

}  // namespace
}  // namespace meridian
