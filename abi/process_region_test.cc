#include "abi/process_region.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

struct Region {
  explicit Region(const ProcessRegionGeometry& g)
      : bytes(ProcessRegionBytes(g)) {
    data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    std::memset(data, 0, bytes);
  }
  ~Region() { std::free(data); }
  uint64_t bytes;
  void* data;
};

std::string Str(const ProcessRegionHeader* h, uint32_t id) {
  const char* data;
  uint32_t n;
  if (!StringAt(h, id, &data, &n)) return "<bad>";
  return std::string(data, n);
}

TEST(ProcessRegionTest, StringsAndRingsRoundTrip) {
  ProcessRegionGeometry g;
  g.ring_capacity = 16;
  g.strings_capacity = 64;
  Region region(g);
  ASSERT_TRUE(InitProcessRegion(region.data, g, 42));
  ProcessRegionLayout layout;
  ASSERT_TRUE(ReadProcessRegionLayout(region.data, region.bytes, &layout));
  EXPECT_EQ(layout.incarnation, 42u);
  // The header: 1,280 bytes, then 64 in-flight slots of 128.
  EXPECT_EQ(layout.strings_offset, 9472u);
  EXPECT_EQ(layout.strings_capacity, 64u);
  EXPECT_EQ(layout.rings_offset, 9536u);
  auto* h = static_cast<ProcessRegionHeader*>(region.data);
  const uint32_t a = AppendString(h, "MPI_Allreduce", 13);
  const uint32_t b = AppendString(h, "forward", 7);
  EXPECT_EQ(a, 1u);   // offset 0
  EXPECT_EQ(b, 21u);  // 4 + 13 rounded up to 20
  EXPECT_EQ(Str(h, a), "MPI_Allreduce");
  EXPECT_EQ(Str(h, b), "forward");
  EXPECT_EQ(Str(h, 0), "");
  // 64 bytes: "forward" ends at 32; 40 more do not fit.
  EXPECT_EQ(AppendString(h, std::string(40, 'x').c_str(), 40), 0u);
  EXPECT_EQ(Str(h, 5), "<bad>");    // not an entry's start
  EXPECT_EQ(Str(h, 999), "<bad>");  // beyond what is published

  ASSERT_TRUE(InitSpanRing(RingMemory(h, 63), h->ring_capacity));
  SpanRingWriter writer(RingMemory(h, 63), SpanRingBytes(16));
  SpanRingReader reader(RingMemory(h, 63), SpanRingBytes(16));
  ProbeRecord r{};
  r.name = b;
  ASSERT_TRUE(writer.Push(r));
  ProbeRecord out;
  ASSERT_EQ(reader.Drain(&out, 1), 1u);
  EXPECT_EQ(Str(h, out.name), "forward");
}

TEST(ProcessRegionTest, RejectsRegionsThatDoNotFit) {
  ProcessRegionGeometry g;
  g.ring_capacity = 16;
  g.strings_capacity = 64;
  Region region(g);
  ProcessRegionLayout layout;
  EXPECT_FALSE(ReadProcessRegionLayout(region.data, region.bytes, &layout));
  ASSERT_TRUE(InitProcessRegion(region.data, g, 1));
  EXPECT_FALSE(ReadProcessRegionLayout(region.data, region.bytes - 1, &layout));
  auto* h = static_cast<ProcessRegionHeader*>(region.data);
  h->ring_stride = 1ULL << 60;
  EXPECT_FALSE(ReadProcessRegionLayout(region.data, region.bytes, &layout));
  // Offsets whose sum wraps past 2^64.
  ASSERT_TRUE(InitProcessRegion(region.data, g, 1));
  h->strings_offset = ~0ULL - 63;
  h->strings_capacity = 128;
  EXPECT_FALSE(ReadProcessRegionLayout(region.data, region.bytes, &layout));
  ASSERT_TRUE(InitProcessRegion(region.data, g, 1));
  h->rings_offset = ~0ULL;
  EXPECT_FALSE(ReadProcessRegionLayout(region.data, region.bytes, &layout));
  // Rings off their 64-byte alignment (their atomics would be misaligned).
  ASSERT_TRUE(InitProcessRegion(region.data, g, 1));
  h->rings_offset += 4;
  EXPECT_FALSE(ReadProcessRegionLayout(region.data, region.bytes, &layout));
  g.ring_capacity = 12;
  EXPECT_FALSE(InitProcessRegion(region.data, g, 1));
}

}  // namespace
}  // namespace meridian
