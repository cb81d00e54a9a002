#include "abi/in_flight.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace meridian {
namespace {

InFlightState Call(uint32_t name, int64_t since) {
  InFlightState c{};
  c.name = name;
  c.category = 2;
  c.flags = InFlightState::kHasSeq | InFlightState::kHasPeer;
  c.since = since;
  c.comm = 0xabc;
  c.seq = 9;
  c.bytes = 64;
  c.peer = 3;
  c.comm_size = 4;
  return c;
}

TEST(InFlightTest, EnterLeaveAndPhase) {
  InFlightCall slot{};
  ClaimInFlight(&slot, /*ticks=*/true);
  SetPhase(&slot, 7, 100);
  EnterCall(&slot, Call(5, 120));
  InFlightState s;
  ASSERT_TRUE(ReadInFlight(&slot, &s));
  EXPECT_EQ(s.name, 5u);
  EXPECT_EQ(s.since, 120);
  EXPECT_EQ(s.flags, InFlightState::kHasSeq | InFlightState::kHasPeer |
                         InFlightState::kTicks);
  EXPECT_EQ(s.comm, 0xabcu);
  EXPECT_EQ(s.seq, 9u);
  EXPECT_EQ(s.bytes, 64);
  EXPECT_EQ(s.peer, 3);
  EXPECT_EQ(s.comm_size, 4u);
  EXPECT_EQ(s.phase, 7u);
  EXPECT_EQ(s.phase_since, 100);
  EXPECT_EQ(s.calls, 0u);

  LeaveCall(&slot, 150);
  SetPhase(&slot, 0, 0);
  ASSERT_TRUE(ReadInFlight(&slot, &s));
  EXPECT_EQ(s.name, 0u);
  EXPECT_EQ(s.last_exit, 150);
  EXPECT_EQ(s.calls, 1u);
  EXPECT_EQ(s.phase, 0u);
  EXPECT_EQ(s.flags & InFlightState::kTicks, InFlightState::kTicks);
  EXPECT_EQ(slot.generation.load() % 2, 0u);

  // A new owner sees nothing of the old one's.
  ClaimInFlight(&slot, /*ticks=*/false);
  ASSERT_TRUE(ReadInFlight(&slot, &s));
  EXPECT_EQ(s.calls, 0u);
  EXPECT_EQ(s.last_exit, 0);
  EXPECT_EQ(s.flags, 0);
}

TEST(InFlightTest, AWriteUnderWayIsNotRead) {
  InFlightCall slot{};
  ClaimInFlight(&slot, false);
  BeginWrite(&slot);  // a writer stopped mid-write (killed, say)
  InFlightState s;
  EXPECT_FALSE(ReadInFlight(&slot, &s, 8));
  EndWrite(&slot);
  EXPECT_TRUE(ReadInFlight(&slot, &s, 8));
}

// A reader beside a writer gets only whole writes: every field the writer
// sets in one write holds the same number.
TEST(InFlightTest, ReaderSeesWholeWrites) {
  InFlightCall slot{};
  ClaimInFlight(&slot, false);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint32_t i = 1; !stop.load(std::memory_order_relaxed); ++i) {
      InFlightState c{};
      c.name = i;
      c.since = i;
      c.comm = i;
      c.seq = i;
      c.bytes = i;
      c.peer = static_cast<int32_t>(i);
      c.comm_size = i;
      EnterCall(&slot, c);
      LeaveCall(&slot, i);
    }
  });
  int whole = 0;
  for (int n = 0; n < 200000; ++n) {
    InFlightState s;
    if (!ReadInFlight(&slot, &s)) continue;
    ++whole;
    if (s.name != 0) {
      ASSERT_EQ(s.since, s.name);
      ASSERT_EQ(s.comm, s.name);
      ASSERT_EQ(s.seq, s.name);
      ASSERT_EQ(s.bytes, s.name);
      ASSERT_EQ(s.comm_size, s.name);
      ASSERT_EQ(s.calls + 1, s.name);
    } else {
      ASSERT_EQ(static_cast<uint64_t>(s.last_exit), s.calls);
    }
  }
  stop = true;
  writer.join();
  EXPECT_GT(whole, 0);
}

}  // namespace
}  // namespace meridian
