#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

std::vector<std::string> Seeds() {
  return {
      "Thread 0x00007f0000000700 (most recent call first):\n"
      "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
      "\n"
      "Current thread 0x00007f0000000740 (most recent call first):\n"
      "  File \"/work/train.py\", line 63 in stuck\n"
      "  File \"/work/train.py\", line 106 in main\n"
      "  File \"/work/train.py\", line 130 in <module>\n",
      "Current thread 0x1 (most recent call first):\n  <no Python frame>\n",
      "Current thread 0x1 (most recent call first):\n"
      "  File \"a\", line ??? in ???\n  ...\n",
      "Current thread \n  File \"\", line  in \n",
  };
}

TEST(PythonDumpFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("python_dump", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("python_dump")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 500), 2004u);
}

}  // namespace
}  // namespace meridian
