#include "query/analysis_memory.h"

#include <thread>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// Spins until `memory` has `n` reservations waiting (they wait on the
// memory's own condition; this only observes it).
void AwaitWaiting(const AnalysisMemory& memory, int64_t n) {
  while (memory.counters().waiting != n) std::this_thread::yield();
}

TEST(AnalysisMemoryTest, GrantsWhatFitsAndTakesItBackWhenTheLeaseEnds) {
  AnalysisMemory memory(100, absl::Seconds(60));
  {
    auto a = memory.Reserve(60, "a");
    ASSERT_TRUE(a.ok());
    auto b = memory.Reserve(40, "b");
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(a->bytes(), 60u);
    EXPECT_EQ(memory.counters().held, 100u);
    AnalysisMemory::Lease moved = std::move(*a);
    EXPECT_EQ(memory.counters().held, 100u);
  }
  const AnalysisMemory::Counters c = memory.counters();
  EXPECT_EQ(c.held, 0u);
  EXPECT_EQ(c.peak, 100u);
  EXPECT_EQ(c.waited, 0);
  EXPECT_EQ(c.refused, 0);
  // More than the whole budget is reserved as the whole budget.
  auto all = memory.Reserve(1000, "all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->bytes(), 100u);
}

TEST(AnalysisMemoryTest, AReservationThatDoesNotFitWaitsForALeaseToEnd) {
  AnalysisMemory memory(100, absl::Seconds(60));
  auto held = memory.Reserve(70, "held");
  ASSERT_TRUE(held.ok());
  uint64_t granted = 0;
  std::thread waiter([&] {
    auto lease = memory.Reserve(50, "waiter");
    ASSERT_TRUE(lease.ok());
    granted = memory.counters().held;
  });
  AwaitWaiting(memory, 1);
  *held = AnalysisMemory::Lease();  // ends it
  waiter.join();
  EXPECT_EQ(granted, 50u);
  EXPECT_EQ(memory.counters().held, 0u);
  EXPECT_EQ(memory.counters().waited, 1);
  EXPECT_EQ(memory.counters().peak, 70u);
}

TEST(AnalysisMemoryTest, ReservationsAreGrantedInTurnNotByWhatFits) {
  AnalysisMemory memory(100, absl::Seconds(60));
  auto held = memory.Reserve(60, "held");
  ASSERT_TRUE(held.ok());
  std::vector<std::string> order;
  absl::Mutex order_mu;
  // The large one asks first and waits; the small one, which would fit
  // now, waits behind it rather than overtake it. The two together do not
  // fit, so the small one is granted only once the large one has recorded
  // its turn and ended its lease.
  std::thread large([&] {
    auto lease = memory.Reserve(95, "large");
    ASSERT_TRUE(lease.ok());
    absl::MutexLock lock(&order_mu);
    order.push_back("large");
  });
  AwaitWaiting(memory, 1);
  std::thread small([&] {
    auto lease = memory.Reserve(10, "small");
    ASSERT_TRUE(lease.ok());
    absl::MutexLock lock(&order_mu);
    order.push_back("small");
  });
  AwaitWaiting(memory, 2);
  *held = AnalysisMemory::Lease();
  large.join();
  small.join();
  EXPECT_EQ(order, (std::vector<std::string>{"large", "small"}));
}

TEST(AnalysisMemoryTest, AReservationWaitingTooLongIsRefusedWithRetryAdvice) {
  AnalysisMemory memory(uint64_t{16} << 20, absl::Milliseconds(20));
  auto held = memory.Reserve(uint64_t{12} << 20, "held");
  ASSERT_TRUE(held.ok());
  auto refused = memory.Reserve(uint64_t{5} << 20, "critical path of job j");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "critical path of job j needs about 5 MiB of this collector's "
            "--analysis-memory-mib 16; the queries running and what is kept "
            "hold 12 MiB of it (waited 20ms); retry in a few seconds, or "
            "raise the limit");
  EXPECT_TRUE(AnalysisMemory::IsBusy(refused.status()));
  EXPECT_FALSE(AnalysisMemory::IsBusy(absl::ResourceExhaustedError("large")));
  const AnalysisMemory::Counters c = memory.counters();
  EXPECT_EQ(c.refused, 1);
  EXPECT_EQ(c.waiting, 0);
  EXPECT_EQ(c.held, uint64_t{12} << 20);
  // One asking for the whole budget says so; one behind others says how
  // many waited ahead of it.
  auto all = memory.Reserve(uint64_t{64} << 20, "an export of job k");
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().message(),
            "an export of job k needs about 16 MiB, all of this collector's "
            "--analysis-memory-mib 16; the queries running and what is kept "
            "hold 12 MiB of it (waited 20ms); retry in a few seconds, or "
            "raise the limit");
  EXPECT_EQ(memory.counters().refused, 2);
  // What was held is untouched, and a reservation that fits still is
  // granted.
  EXPECT_TRUE(memory.Reserve(uint64_t{4} << 20, "fits").ok());
}

TEST(AnalysisMemoryTest, AWaitingReservationFirstReclaimsWhatIsOnlyKept) {
  AnalysisMemory memory(100, absl::Seconds(60));
  std::optional<AnalysisMemory::Lease> kept;
  auto lease = memory.Reserve(80, "kept analysis");
  ASSERT_TRUE(lease.ok());
  kept.emplace(std::move(*lease));
  int reclaims = 0;
  memory.set_reclaim([&] {
    ++reclaims;
    kept.reset();
  });
  auto next = memory.Reserve(50, "next");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(reclaims, 1);
  EXPECT_EQ(memory.counters().held, 50u);
  // A reservation that fits reclaims nothing.
  EXPECT_TRUE(memory.Reserve(50, "fits").ok());
  EXPECT_EQ(reclaims, 1);
}

TEST(AnalysisMemoryTest, TryReserveTakesOnlyWhatFitsNowAndNeverWaits) {
  AnalysisMemory memory(100, absl::Seconds(60));
  auto held = memory.Reserve(70, "held");
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(memory.TryReserve(31).has_value());
  std::optional<AnalysisMemory::Lease> kept = memory.TryReserve(30);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(memory.counters().held, 100u);
  kept.reset();
  EXPECT_EQ(memory.counters().held, 70u);
  EXPECT_EQ(memory.counters().waited, 0);
}

}  // namespace
}  // namespace meridian
