#include "agent/process_activity.h"

#include <cstdlib>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kS = 1000000000;
constexpr int64_t kWall = 1700000000000000000;

// Monotonic t is the node's kWall + t; ticks are 2 ns, tick 0 monotonic 0.
NodeTimeMap Time() {
  auto samples = std::make_shared<std::vector<TimeSample>>(
      std::vector<TimeSample>{{0, 0, kWall, 50}, {kS / 2, kS, kWall + kS, 50}});
  auto next = std::make_shared<size_t>(0);
  return NodeTimeMap([samples, next] {
    const size_t i = std::min(*next, samples->size() - 1);
    *next = i + 1;
    return (*samples)[i];
  });
}

struct Region {
  explicit Region(const ProcessRegionGeometry& g)
      : bytes(ProcessRegionBytes(g)),
        memory(static_cast<char*>(aligned_alloc(64, bytes))) {
    std::fill(memory, memory + bytes, 0);
  }
  ~Region() { free(memory); }
  size_t bytes;
  char* memory;
};

TEST(ProcessActivityTest, EachOwnedThreadAsItsSlotSays) {
  ProcessRegionGeometry g;
  g.ring_capacity = 16;
  g.strings_capacity = 256;
  Region region(g);
  ASSERT_TRUE(InitProcessRegion(region.memory, g, 7));
  auto* header = reinterpret_cast<ProcessRegionHeader*>(region.memory);
  ProcessRegionLayout layout;
  ASSERT_TRUE(ReadProcessRegionLayout(region.memory, region.bytes, &layout));
  const uint32_t allreduce = AppendString(header, "MPI_Allreduce", 13);
  const uint32_t solve = AppendString(header, "solve", 5);
  // Ring 0: thread 77 in MPI_Allreduce #9 since monotonic 1 s, in phase
  // "solve" since 0.5 s. Ring 1: thread 78, a name not in the string area.
  // Ring 2: laid out but its thread gone.
  header->slots[0].tid = 77;
  header->slots[0].state = kSlotOwned;
  header->slots[1].tid = 78;
  header->slots[1].state = kSlotOwned;
  header->slots[2].tid = 79;
  header->slots[2].state = kSlotRetired;
  ClaimInFlight(&header->in_flight[0]);
  ClaimInFlight(&header->in_flight[1]);
  // The phase on the probe's clock (ticks of 2 ns: tick kS / 4 is
  // monotonic kS / 2), the call on CLOCK_MONOTONIC, as c10d's are.
  SetPhase(&header->in_flight[0], solve, kS / 4, /*ticks=*/true);
  ProbeRecord r{};
  r.name = allreduce;
  r.category = 1;  // v1::CATEGORY_MPI
  r.flags = ProbeRecord::kHasSeq | ProbeRecord::kHasPeer;
  r.start_ns = kS;
  r.comm = 0x77;
  r.comm_size = 4;
  r.seq = 9;
  r.bytes = 8;
  r.peer = 2;
  EnterCall(&header->in_flight[0], r);
  r.name = 4000;  // beyond the strings published
  r.flags = 0;
  EnterCall(&header->in_flight[1], r);

  NodeTimeMap time = Time();
  SlotSeen seen[ProcessRegionHeader::kMaxRings] = {};
  v1::ProcessActivity a;
  SampleActivity(region.memory, layout, time, kWall + 3 * kS, seen, &a);
  ASSERT_EQ(a.threads_size(), 2);
  const v1::ThreadActivity& t = a.threads(0);
  EXPECT_EQ(t.tid(), 77);
  EXPECT_EQ(t.call(), "MPI_Allreduce");
  EXPECT_EQ(t.category(), v1::CATEGORY_MPI);
  EXPECT_EQ(t.call_ns(), 2 * kS);
  EXPECT_EQ(t.comm(), 0x77u);
  EXPECT_EQ(t.comm_size(), 4u);
  EXPECT_TRUE(t.has_seq());
  EXPECT_EQ(t.seq(), 9u);
  EXPECT_EQ(t.bytes(), 8);
  EXPECT_EQ(t.peer(), 2);
  EXPECT_EQ(t.tag(), -1);
  EXPECT_EQ(t.phase(), "solve");
  EXPECT_EQ(t.phase_ns(), 5 * kS / 2);
  EXPECT_EQ(t.idle_ns(), -1);  // it never left a call
  EXPECT_EQ(a.threads(1).tid(), 78);
  EXPECT_EQ(a.threads(1).call(), "");
  EXPECT_FALSE(a.threads(1).has_seq());
  EXPECT_EQ(a.threads(1).peer(), -1);

  // It leaves: idle from the sample that saw its count move.
  LeaveCall(&header->in_flight[0]);
  a.Clear();
  SampleActivity(region.memory, layout, time, kWall + 4 * kS, seen, &a);
  EXPECT_EQ(a.threads(0).call(), "");
  EXPECT_EQ(a.threads(0).calls(), 1u);
  EXPECT_EQ(a.threads(0).idle_ns(), 0);
  a.Clear();
  SampleActivity(region.memory, layout, time, kWall + 8 * kS, seen, &a);
  EXPECT_EQ(a.threads(0).idle_ns(), 4 * kS);

  // A slot mid-write of its phase is left out, not misread.
  header->in_flight[0].phase_generation.fetch_add(1);
  a.Clear();
  SampleActivity(region.memory, layout, time, kWall + 9 * kS, seen, &a);
  ASSERT_EQ(a.threads_size(), 1);
  EXPECT_EQ(a.threads(0).tid(), 78);
}

}  // namespace
}  // namespace meridian
