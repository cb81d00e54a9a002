#include "abi/in_flight.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace meridian {
namespace {

ProbeRecord Call(uint32_t name, int64_t start) {
  ProbeRecord rec{};
  ProbeRecord* r = &rec;
  r->name = name;
  r->category = 1;
  r->flags = ProbeRecord::kHasSeq | ProbeRecord::kHasPeer | ProbeRecord::kTicks;
  r->start_ns = start;
  r->comm = 0xabc;
  r->seq = 9;
  r->bytes = 64;
  r->peer = 3;
  r->comm_size = 4;
  r->tag = 7;
  return rec;
}

TEST(InFlightTest, EnterLeaveAndPhase) {
  InFlightCall slot{};
  ClaimInFlight(&slot);
  SetPhase(&slot, 7, 100, /*ticks=*/true);
  EnterCall(&slot, Call(5, 120));
  InFlightState s;
  ASSERT_TRUE(ReadInFlight(&slot, &s));
  EXPECT_EQ(s.name, 5u);
  EXPECT_EQ(s.since, 120);
  EXPECT_EQ(s.flags,
            ProbeRecord::kHasSeq | ProbeRecord::kHasPeer | ProbeRecord::kTicks);
  EXPECT_EQ(s.category, 1);
  EXPECT_EQ(s.comm, 0xabcu);
  EXPECT_EQ(s.seq, 9u);
  EXPECT_EQ(s.bytes, 64);
  EXPECT_EQ(s.peer, 3);
  EXPECT_EQ(s.tag, 7);
  EXPECT_EQ(s.comm_size, 4u);
  EXPECT_EQ(s.phase, 7u);
  EXPECT_EQ(s.phase_since, 100);
  EXPECT_EQ(s.phase_flags, ProbeRecord::kTicks);
  EXPECT_EQ(s.calls, 0u);

  LeaveCall(&slot);
  SetPhase(&slot, 0, 0, /*ticks=*/false);
  ASSERT_TRUE(ReadInFlight(&slot, &s));
  EXPECT_EQ(s.name, 0u);
  EXPECT_EQ(s.calls, 1u);
  EXPECT_EQ(s.phase, 0u);
  EXPECT_EQ(s.phase_flags, 0);
  EXPECT_EQ(s.flags & ProbeRecord::kTicks, ProbeRecord::kTicks);

  // A new owner sees nothing of the old one's.
  SetPhase(&slot, 8, 200, /*ticks=*/true);
  ClaimInFlight(&slot);
  ASSERT_TRUE(ReadInFlight(&slot, &s));
  EXPECT_EQ(s.name, 0u);
  EXPECT_EQ(s.calls, 0u);
  EXPECT_EQ(s.flags, 0);
  EXPECT_EQ(s.phase, 0u);
  EXPECT_EQ(s.phase_flags, 0);
}

TEST(InFlightTest, AWaitSaysTheOperationOfItsRequestAndNoOtherCallDoes) {
  InFlightCall slot{};
  ClaimInFlight(&slot);
  EnterCall(&slot, Call(5, 120));
  InFlightState s;
  ASSERT_TRUE(ReadInFlight(&slot, &s));
  EXPECT_EQ(s.waits_for, 0u);
  LeaveCall(&slot);

  ProbeRecord wait = Call(11, 130);
  wait.flags = ProbeRecord::kHasPeer | ProbeRecord::kHasTag;
  EnterCall(&slot, wait, 12);
  ASSERT_TRUE(ReadInFlight(&slot, &s));
  EXPECT_EQ(s.name, 11u);
  EXPECT_EQ(s.waits_for, 12u);
  EXPECT_EQ(s.flags, ProbeRecord::kHasPeer | ProbeRecord::kHasTag);
  EXPECT_EQ(s.category, 1);
  EXPECT_EQ(s.tag, 7);
  EXPECT_EQ(s.peer, 3);
  EXPECT_EQ(s.bytes, 64);
  LeaveCall(&slot);

  // The next call leaves waits_for in the slot, but not marked: not read.
  EnterCall(&slot, Call(5, 140));
  ASSERT_TRUE(ReadInFlight(&slot, &s));
  EXPECT_EQ(s.name, 5u);
  EXPECT_EQ(s.waits_for, 0u);
  EXPECT_EQ(s.category, 1);
  EXPECT_EQ(s.calls, 2u);
}

TEST(InFlightTest, APhaseWriteUnderWayIsNotRead) {
  InFlightCall slot{};
  ClaimInFlight(&slot);
  slot.phase_generation.fetch_add(1);  // a writer stopped mid-write
  InFlightState s;
  EXPECT_FALSE(ReadInFlight(&slot, &s, 8));
  slot.phase_generation.fetch_add(1);
  EXPECT_TRUE(ReadInFlight(&slot, &s, 8));
}

// A reader beside a writer gets only whole calls: every field a call sets
// holds the same number, one more than the calls left before it.
TEST(InFlightTest, ReaderSeesWholeCalls) {
  InFlightCall slot{};
  ClaimInFlight(&slot);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint32_t i = 1; !stop.load(std::memory_order_relaxed); ++i) {
      ProbeRecord r{};
      r.name = i;
      r.start_ns = i;
      r.comm = i;
      r.seq = i;
      r.bytes = i;
      r.peer = static_cast<int32_t>(i);
      r.comm_size = i;
      EnterCall(&slot, r);
      LeaveCall(&slot);
    }
  });
  for (int n = 0; n < 200000; ++n) {
    InFlightState s;
    if (!ReadInFlight(&slot, &s) || s.name == 0) continue;
    ASSERT_EQ(s.since, s.name);
    ASSERT_EQ(s.comm, s.name);
    ASSERT_EQ(s.seq, s.name);
    ASSERT_EQ(s.bytes, s.name);
    ASSERT_EQ(s.peer, static_cast<int32_t>(s.name));
    ASSERT_EQ(s.comm_size, s.name);
    ASSERT_EQ(s.calls + 1, s.name);
  }
  stop = true;
  writer.join();
}

}  // namespace
}  // namespace meridian
