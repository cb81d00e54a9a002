#include <cstdlib>
#include <string>
#include <vector>

#include "abi/process_region.h"
#include "abi/span_ring.h"
#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

// A small region with two strings and one ring holding three records.
std::vector<std::string> Seeds() {
  ProcessRegionGeometry g;
  g.ring_capacity = 4;
  g.strings_capacity = 64;
  std::string region(ProcessRegionBytes(g), '\0');
  void* memory = std::aligned_alloc(64, (region.size() + 63) / 64 * 64);
  memset(memory, 0, region.size());
  EXPECT_TRUE(InitProcessRegion(memory, g, 7));
  auto* header = static_cast<ProcessRegionHeader*>(memory);
  const uint32_t name = AppendString(header, "MPI_Allreduce", 13);
  AppendString(header, "step", 4);
  InitSpanRing(RingMemory(header, 0), g.ring_capacity);
  header->slots[0].state.store(kSlotOwned);
  SpanRingWriter writer(RingMemory(header, 0), SpanRingBytes(4));
  for (int i = 0; i < 3; ++i) {
    ProbeRecord r{};
    r.name = name;
    r.start_ns = i;
    writer.Push(r);
  }
  memcpy(region.data(), memory, region.size());
  std::free(memory);
  return {region};
}

TEST(ProcessRegionFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("process_region", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("process_region")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 3000), 3001u);
}

}  // namespace
}  // namespace meridian
