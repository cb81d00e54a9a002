#include "query/analysis/stragglers.h"

#include "gtest/gtest.h"
#include "testing/scenario_fixture.h"
#include "testing/scenario_job.h"

namespace meridian {
namespace {

struct Wait {
  int rank;
  int64_t wait_ns, collective_ns, late_sender_ns, last, waited_ns;
};

void ExpectRanks(const v1::StragglersReply& reply,
                 const std::vector<Wait>& expected) {
  ASSERT_EQ(reply.ranks_size(), static_cast<int>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    const v1::RankWait& r = reply.ranks(i);
    SCOPED_TRACE(testing::Message() << "entry " << i);
    EXPECT_EQ(r.rank(), expected[i].rank);
    EXPECT_EQ(r.wait_ns(), expected[i].wait_ns);
    EXPECT_EQ(r.collective_wait_ns(), expected[i].collective_ns);
    EXPECT_EQ(r.late_sender_wait_ns(), expected[i].late_sender_ns);
    EXPECT_EQ(r.instances_last(), expected[i].last);
    EXPECT_EQ(r.waited_ns(), expected[i].waited_ns);
  }
}

TEST(StragglersTest, SlowRankIsLastAtEveryAllreduce) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  v1::StragglersReply reply = Stragglers(*f->graph, 0);
  EXPECT_EQ(reply.instances(), 8);
  EXPECT_EQ(reply.messages(), 0);
  ASSERT_EQ(reply.collectives_size(), 8);
  for (int i = 0; i < 4; ++i) {  // the main thread's, most skewed first
    const v1::CollectiveInstance& c = reply.collectives(i);
    EXPECT_EQ(c.comm(), 1u);
    EXPECT_EQ(c.seq(), 2u * i + 1);
    EXPECT_EQ(c.step(), i);
    EXPECT_EQ(c.name(), "MPI_Allreduce");
    EXPECT_EQ(c.ranks(), 4);
    EXPECT_EQ(c.start_ns(), kScenarioT0 + i * 10 * kMs + 3 * kMs);
    EXPECT_EQ(c.skew_ns(), 2 * kMs);
    EXPECT_EQ(c.last_rank(), 2);
    EXPECT_EQ(c.wait_ns(), 6 * kMs);
  }
  for (int i = 4; i < 8; ++i) {  // the background thread's: all on time
    EXPECT_EQ(reply.collectives(i).comm(), 2u);
    EXPECT_EQ(reply.collectives(i).skew_ns(), 0);
    EXPECT_EQ(reply.collectives(i).last_rank(), -1);
    EXPECT_EQ(reply.collectives(i).wait_ns(), 0);
  }
  ExpectRanks(reply, {{2, 24 * kMs, 24 * kMs, 0, 4, 0},
                      {0, 0, 0, 0, 0, 8 * kMs},
                      {1, 0, 0, 0, 0, 8 * kMs},
                      {3, 0, 0, 0, 0, 8 * kMs}});
  EXPECT_EQ(Stragglers(*f->graph, 3).collectives_size(), 3);
}

TEST(StragglersTest, SlowLinkMakesItsReceiverLastAtTheBarrier) {
  auto f = ScenarioFixture::Load("slow-link");
  ASSERT_NE(f, nullptr);
  v1::StragglersReply reply = Stragglers(*f->graph, 0);
  EXPECT_EQ(reply.instances(), 2);
  EXPECT_EQ(reply.messages(), 8);
  for (const v1::CollectiveInstance& c : reply.collectives()) {
    EXPECT_EQ(c.name(), "MPI_Barrier");
    EXPECT_EQ(c.skew_ns(), 1900 * kUs);
    EXPECT_EQ(c.last_rank(), 2);
    EXPECT_EQ(c.wait_ns(), 5700 * kUs);
  }
  ExpectRanks(reply, {{2, 11400 * kUs, 11400 * kUs, 0, 2, 0},
                      {0, 0, 0, 0, 0, 3800 * kUs},
                      {1, 0, 0, 0, 0, 3800 * kUs},
                      {3, 0, 0, 0, 0, 3800 * kUs}});
}

TEST(StragglersTest, RankLateEveryOtherStep) {
  auto f = ScenarioFixture::Load("late-every-other-step");
  ASSERT_NE(f, nullptr);
  v1::StragglersReply reply = Stragglers(*f->graph, 0);
  ASSERT_EQ(reply.collectives_size(), 4);
  EXPECT_EQ(reply.collectives(0).step(), 1);
  EXPECT_EQ(reply.collectives(1).step(), 3);
  for (int i : {0, 1}) {
    EXPECT_EQ(reply.collectives(i).skew_ns(), 2 * kMs);
    EXPECT_EQ(reply.collectives(i).last_rank(), 1);
  }
  for (int i : {2, 3}) {
    EXPECT_EQ(reply.collectives(i).skew_ns(), 0);
    EXPECT_EQ(reply.collectives(i).last_rank(), -1);
  }
  ExpectRanks(reply, {{1, 12 * kMs, 12 * kMs, 0, 2, 0},
                      {0, 0, 0, 0, 0, 4 * kMs},
                      {2, 0, 0, 0, 0, 4 * kMs},
                      {3, 0, 0, 0, 0, 4 * kMs}});
}

TEST(StragglersTest, PointToPointChainChargesLateSenders) {
  auto f = ScenarioFixture::Load("p2p-chain");
  ASSERT_NE(f, nullptr);
  v1::StragglersReply reply = Stragglers(*f->graph, 0);
  EXPECT_EQ(reply.instances(), 0);
  EXPECT_EQ(reply.messages(), 3);
  ExpectRanks(reply, {{2, 3100 * kUs, 0, 3100 * kUs, 0, 2050 * kUs},
                      {1, 2050 * kUs, 0, 2050 * kUs, 0, 1000 * kUs},
                      {0, 1000 * kUs, 0, 1000 * kUs, 0, 0},
                      {3, 0, 0, 0, 0, 3100 * kUs}});
}

}  // namespace
}  // namespace meridian
