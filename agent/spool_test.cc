#include "agent/spool.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "gtest/gtest.h"

namespace meridian {
namespace {

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/meridian-spool-XXXXXX";
    dir_ = mkdtemp(dir);
  }
  void TearDown() override { (void)!system(("rm -rf " + dir_).c_str()); }
  static v1::Batch Batch(uint64_t seq, int spans) {
    v1::Batch batch;
    batch.set_agent_id("node/agent-1");
    batch.set_batch_seq(seq);
    batch.add_strings("");
    for (int i = 0; i < spans; ++i) batch.add_spans()->set_start_ns(i);
    return batch;
  }
  std::string dir_;
};

TEST_F(SpoolTest, WhatIsNotRemovedIsFoundAgainInOrderWithItsRingPositions) {
  {
    auto spool = Spool::Open(dir_ + "/a/b", 1 << 20);
    ASSERT_TRUE(spool.ok()) << spool.status();
    auto first = (*spool)->Append(Batch(1, 3), {{77, 0, 10}, {77, 1, 4}});
    auto second = (*spool)->Append(Batch(2, 5), {{77, 0, 15}});
    auto third = (*spool)->Append(Batch(3, 1), {{99, 2, 1}});
    ASSERT_TRUE(first.ok() && second.ok() && third.ok());
    EXPECT_EQ(*first, 1u);
    EXPECT_EQ(*third, 3u);
    ASSERT_TRUE((*spool)->Remove(*second).ok());
    EXPECT_EQ((*spool)->Remove(*second).code(), absl::StatusCode::kNotFound);
  }
  auto again = Spool::Open(dir_ + "/a/b", 1 << 20);
  ASSERT_TRUE(again.ok()) << again.status();
  std::vector<Spool::Entry> recovered = (*again)->TakeRecovered();
  ASSERT_EQ(recovered.size(), 2u);
  EXPECT_EQ(recovered[0].batch.batch_seq(), 1u);
  EXPECT_EQ(recovered[0].batch.spans_size(), 3);
  EXPECT_EQ(recovered[1].id, 3u);
  const auto& positions = (*again)->recovered_positions();
  EXPECT_EQ(positions.size(), 3u);
  EXPECT_EQ(positions.at({77, 0}), 10u);  // batch 2 (to 15) was acknowledged
  EXPECT_EQ(positions.at({77, 1}), 4u);
  EXPECT_EQ(positions.at({99, 2}), 1u);
  auto next = (*again)->Append(Batch(4, 1), {});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, 4u);  // ids keep increasing across agents
}

TEST_F(SpoolTest, AFullSpoolRefusesAndSaysHowToFixIt) {
  auto spool = Spool::Open(dir_, 600);
  ASSERT_TRUE(spool.ok());
  ASSERT_TRUE((*spool)->Append(Batch(1, 20), {}).ok());
  auto full = (*spool)->Append(Batch(2, 200), {});
  ASSERT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.status().message().find("--spool-max-bytes"),
            std::string::npos);
  EXPECT_LE((*spool)->bytes(), 600u);
}

TEST_F(SpoolTest, AnUnreadableFileIsSetAsideAndTheRestLoads) {
  {
    auto spool = Spool::Open(dir_, 1 << 20);
    ASSERT_TRUE((*spool)->Append(Batch(1, 2), {}).ok());
    ASSERT_TRUE((*spool)->Append(Batch(2, 2), {}).ok());
  }
  const std::string broken = dir_ + "/00000000000000000001.batch";
  std::ofstream(broken, std::ios::trunc) << "MSPLgarbage";
  auto again = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->corrupt_files(), std::vector<std::string>{broken});
  EXPECT_EQ(access((broken + ".corrupt").c_str(), F_OK), 0);
  std::vector<Spool::Entry> recovered = (*again)->TakeRecovered();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].batch.batch_seq(), 2u);
}

}  // namespace
}  // namespace meridian
