#include "collector/slowdown_watch.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// Rank `rank` of job "j": steps first..last of `compute` ns computing and
// `comm` ns communicating each.
v1::ProcessActivity Steps(int32_t rank, int64_t first, int64_t last,
                          int64_t compute, int64_t comm) {
  v1::ProcessActivity p;
  p.set_job("j");
  p.set_rank(rank);
  p.set_pid(100 + rank);
  for (int64_t step = first; step <= last; ++step) {
    v1::StepTime* s = p.add_steps();
    s->set_step(step);
    s->set_dur_ns(compute + comm);
    s->set_comm_ns(comm);
  }
  return p;
}

std::vector<std::string> Lines(const std::vector<v1::HealthSlowdown>& s) {
  std::vector<std::string> lines;
  for (const v1::HealthSlowdown& d : s) {
    lines.push_back(d.node() + " rank " + std::to_string(d.rank()) + " " +
                    d.metric() + " from " + std::to_string(d.from_step()) +
                    " baseline " + std::to_string(d.baseline_ns()) + " now " +
                    std::to_string(d.now_ns()) + " peer " +
                    std::to_string(d.peer()));
  }
  return lines;
}

TEST(SlowdownWatchTest, TheSlowRankNotTheOnesWaitingForIt) {
  SlowdownWatch watch;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  // Four ranks, 2 ms compute and 0.5 ms communication a step; from step
  // 200 rank 1 computes 3.2 ms and the others wait 1.2 ms longer.
  for (int64_t from = 0; from < 400; from += 50) {
    for (int32_t rank = 0; rank < 4; ++rank) {
      const bool late = from >= 200;
      watch.Add(
          "n" + std::to_string(rank / 2),
          Steps(rank, from, from + 49, late && rank == 1 ? 3200000 : 2000000,
                late && rank != 1 ? 1700000 : 500000),
          t0);
    }
  }
  EXPECT_EQ(Lines(watch.Job("j")),
            (std::vector<std::string>{
                "n0 rank 1 compute from 200 baseline 2000000 now 3200000 "
                "peer -1"}));
  EXPECT_TRUE(watch.Job("other").empty());
  const auto slow = watch.SlowJobs();
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(Lines(slow.at("j")), Lines(watch.Job("j")));
}

TEST(SlowdownWatchTest, CommunicationAloneIsReportedAsSuch) {
  SlowdownWatch watch;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  watch.Add("n0", Steps(0, 0, 99, 2000000, 500000), t0);
  watch.Add("n0", Steps(0, 100, 199, 2000000, 1000000), t0);
  EXPECT_EQ(Lines(watch.Job("j")),
            (std::vector<std::string>{
                "n0 rank 0 communication from 100 baseline 500000 now "
                "1000000 peer -1"}));
}

TEST(SlowdownWatchTest, EveryRankSlowerTogetherIsNotARanksFault) {
  SlowdownWatch watch;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  // From step 100 every rank computes 1.3 to 1.4 times as long (a busier
  // machine): each is slower than its past, none than the others.
  for (int32_t rank = 0; rank < 4; ++rank) {
    watch.Add("n0", Steps(rank, 0, 99, 2000000, 500000), t0);
    watch.Add("n0", Steps(rank, 100, 199, 2600000 + 50000 * rank, 500000), t0);
  }
  EXPECT_TRUE(watch.Job("j").empty());
  EXPECT_TRUE(watch.SlowJobs().empty());
}

TEST(SlowdownWatchTest, BoundedAndForgetful) {
  SlowdownWatch watch;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  for (int32_t rank = 0; rank < static_cast<int32_t>(SlowdownWatch::kMaxRanks);
       ++rank) {
    watch.Add("n", Steps(rank, 0, 0, 1, 1), t0);
  }
  watch.Add("n", Steps(-1, 0, 0, 1, 1), t0);  // no rank: ignored
  EXPECT_EQ(watch.refused(), 0u);
  watch.Add("n", Steps(999999, 0, 0, 1, 1), t0);
  EXPECT_EQ(watch.refused(), 1u);
  // Eleven minutes later every rank is forgotten: a new one is followed.
  watch.Add("n", Steps(999999, 0, 0, 1, 1), t0 + absl::Minutes(11));
  EXPECT_EQ(watch.refused(), 1u);
}

TEST(SlowdownWatchTest, NamesTheNodeCountersThatChangedWithIt) {
  SlowdownWatch watch;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  // A report a second of 10 steps each; rank 0's node has 40 % of its CPU
  // stolen from second 20 on (step 200), and rank 0 computes 1.6 x from
  // then; rank 1's node does not change.
  for (int64_t second = 0; second < 40; ++second) {
    const absl::Time at = t0 + absl::Seconds(second);
    const bool late = second >= 20;
    for (const char* node : {"n0", "n1"}) {
      NodeCounterHistory::Counters counters;
      v1::NodeCounterValue* steal = counters.Add();
      steal->set_name("cpu.steal_percent");
      steal->set_value(late && node == std::string("n0") ? 40 : 0);
      v1::NodeCounterValue* used = counters.Add();
      used->set_name("mem.used_bytes");
      used->set_value(1e9);
      watch.AddNodeCounters(node, counters, second * 1000000000, at);
    }
    watch.Add("n0",
              Steps(0, second * 10, second * 10 + 9, late ? 3200000 : 2000000,
                    500000),
              at);
    watch.Add("n1", Steps(1, second * 10, second * 10 + 9, 2000000, 500000),
              at);
  }
  const std::vector<v1::HealthSlowdown> slow = watch.Job("j");
  ASSERT_EQ(Lines(slow), (std::vector<std::string>{
                             "n0 rank 0 compute from 200 baseline 2000000 "
                             "now 3200000 peer -1"}));
  ASSERT_EQ(slow[0].counters_size(), 1);
  EXPECT_EQ(slow[0].counters(0).name(), "cpu.steal_percent");
  EXPECT_EQ(slow[0].counters(0).baseline(), 0);
  EXPECT_EQ(slow[0].counters(0).now(), 40);
}

// Steps first..last of rank `rank`: 2 ms computing, then 256 KiB with
// `peer` in `p2p_ns`, plus 400 us in a collective.
v1::ProcessActivity Exchanging(int32_t rank, int64_t first, int64_t last,
                               int32_t peer, int64_t p2p_ns) {
  v1::ProcessActivity p = Steps(rank, first, last, 2000000, 400000 + p2p_ns);
  for (v1::StepTime& s : *p.mutable_steps()) {
    v1::PeerTime* t = s.add_peers();
    t->set_peer(peer);
    t->set_ns(p2p_ns);
    t->set_bytes(256 << 10);
  }
  return p;
}

// Four ranks: pairs (0, 1) and (2, 3) exchange 256 KiB a step in `fast_ns`
// (100 us); from step 200 the ranks `slow` picks take four times as long.
std::vector<std::string> Pairs(const std::function<bool(int32_t)>& slow,
                               int64_t fast_ns = 100000) {
  SlowdownWatch watch;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  for (int64_t from = 0; from < 400; from += 50) {
    for (int32_t rank = 0; rank < 4; ++rank) {
      watch.Add("n" + std::to_string(rank / 2),
                Exchanging(rank, from, from + 49, rank ^ 1,
                           from >= 200 && slow(rank) ? 4 * fast_ns : fast_ns),
                t0);
    }
  }
  return Lines(watch.Job("j"));
}

TEST(SlowdownWatchTest, ASlowLinkIsTheLinksNotItsRanks) {
  // Both ends of the pair (0, 1), nothing else.
  EXPECT_EQ(Pairs([](int32_t rank) { return rank < 2; }),
            (std::vector<std::string>{
                "n0 rank 0 link from 200 baseline 400000 now 1600000 "
                "peer 1"}));
}

TEST(SlowdownWatchTest, OneEndWaitingLongerIsNotALink) {
  // Rank 0's calls with rank 1 (it waits for a late sender); not rank 1's.
  EXPECT_EQ(Pairs([](int32_t rank) { return rank == 0; }),
            (std::vector<std::string>{
                "n0 rank 0 communication from 200 baseline 500000 now 800000 "
                "peer -1"}));
}

TEST(SlowdownWatchTest, EveryLinkSlowerTogetherIsNotALinks) {
  // Every pair (the machine): each rank and pair is slower than its past,
  // none than the others.
  EXPECT_TRUE(Pairs([](int32_t) { return true; }).empty());
}

TEST(SlowdownWatchTest, ALinkThatDoesNotBoundTheStepIsNotReported) {
  // The pair (0, 1) four times as slow (40 us a step, 160 us a MiB), and
  // twice as slow as its past by more than the floor, but 30 us more in a
  // step of 2.43 ms (1.2 %, under kStepShare): no fail-slow.
  EXPECT_TRUE(Pairs([](int32_t rank) { return rank < 2; }, 10000).empty());
  // The same at 100 us (300 us more a step, 12 %) is one: above.
}

TEST(SlowdownWatchTest, ACommunicationChangeThatDoesNotBoundTheStepIsNot) {
  // Rank 0's communication from 100 us to 160 us a step (1.6 times, above
  // the floor) in a step of 10 ms: 0.6 % more, not reported; its compute
  // from 10 ms to 12.5 ms (25 %) is.
  SlowdownWatch watch;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  watch.Add("n0", Steps(0, 0, 99, 10000000, 100000), t0);
  watch.Add("n0", Steps(0, 100, 199, 10000000, 160000), t0);
  EXPECT_TRUE(watch.Job("j").empty());
  EXPECT_TRUE(watch.SlowJobs().empty());
  watch.Add("n0", Steps(0, 200, 299, 12500000, 160000), t0);
  EXPECT_EQ(Lines(watch.Job("j")),
            (std::vector<std::string>{
                "n0 rank 0 compute from 200 baseline 10000000 now 12500000 "
                "peer -1"}));
}

}  // namespace
}  // namespace meridian
