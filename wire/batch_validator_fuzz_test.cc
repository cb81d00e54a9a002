#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"
#include "wire/batch_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

std::vector<std::string> Seeds() {
  BatchBuilder builder("node-a");
  int p = builder.DeclareProcess({"job", "host", 0, 0, 42});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 7, "main");
  builder.AddSpan(t, v1::CATEGORY_MPI, "MPI_Send", 1700000000000000000, 100)
      ->set_bytes(8);
  std::vector<std::string> seeds = {builder.Take().SerializeAsString()};
  // A batch of chunks, with a ring range.
  p = builder.DeclareProcess({"job", "host", 1, 0, 43});
  t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 8, "main");
  const int ring = builder.AddRing(99, 0, 10);
  for (int i = 0; i < 20; ++i) {
    builder.AddColumnSpan(t, ring, 10 + i, v1::CATEGORY_USER, "step",
                          1700000000000000000 + i * 1000, 500);
  }
  builder.SetRingEnd(ring, 30);
  seeds.push_back(builder.Take().SerializeAsString());
  return seeds;
}

TEST(BatchValidatorFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("batch_validator", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("batch_validator")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 2000), 4002u);
}

}  // namespace
}  // namespace meridian
