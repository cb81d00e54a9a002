#include "collector/activity_board.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::ProcessActivity Process(const std::string& job, int32_t rank) {
  v1::ProcessActivity p;
  p.set_job(job);
  p.set_rank(rank);
  p.set_pid(1000 + rank);
  v1::ThreadActivity* t = p.add_threads();
  t->set_tid(1000 + rank);
  t->set_call("MPI_Allreduce");
  return p;
}

TEST(ActivityBoardTest, AReportReplacesTheAgentsLast) {
  ActivityBoard board;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  ASSERT_TRUE(
      board.Report("a1", "n1", {Process("j", 0), Process("k", 0)}, t0).ok());
  ASSERT_TRUE(
      board.Report("a2", "n2", {Process("j", 1)}, t0 + absl::Seconds(1)).ok());
  std::vector<LiveProcess> j = board.Job("j", t0 + absl::Seconds(2));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0].node, "n1");
  EXPECT_EQ(j[0].sampled_ago_ns, 2000000000);
  EXPECT_EQ(j[0].activity.rank(), 0);
  EXPECT_EQ(j[1].node, "n2");
  EXPECT_EQ(j[1].sampled_ago_ns, 1000000000);
  // Rank 0's process exited: a1 reports only k's.
  ASSERT_TRUE(
      board.Report("a1", "n1", {Process("k", 0)}, t0 + absl::Seconds(3)).ok());
  j = board.Job("j", t0 + absl::Seconds(3));
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0].activity.rank(), 1);
  EXPECT_TRUE(board.Job("none", t0).empty());
  // An agent silent for 10 minutes is forgotten at the next report.
  ASSERT_TRUE(
      board.Report("a1", "n1", {Process("k", 0)}, t0 + absl::Minutes(11)).ok());
  EXPECT_TRUE(board.Job("j", t0 + absl::Minutes(11)).empty());
}

TEST(ActivityBoardTest, OversizedReportsAreRefused) {
  google::protobuf::RepeatedPtrField<v1::ProcessActivity> report;
  *report.Add() = Process("j", 0);
  EXPECT_TRUE(ActivityBoard::Check(report).ok());
  report.Mutable(0)->mutable_threads(0)->set_call(std::string(5000, 'x'));
  const std::string names_over =
      "activity: process 1000 names a call, phase or awaited operation over "
      "4096 bytes";
  EXPECT_EQ(ActivityBoard::Check(report).message(), names_over);
  report.Mutable(0)->mutable_threads(0)->set_call("MPI_Wait");
  report.Mutable(0)->mutable_threads(0)->set_waits_for(std::string(4097, 'x'));
  EXPECT_EQ(ActivityBoard::Check(report).message(), names_over);
  report.Mutable(0)->mutable_threads(0)->set_waits_for("MPI_Isend");
  EXPECT_TRUE(ActivityBoard::Check(report).ok());
  report.Mutable(0)->mutable_threads(0)->set_call("MPI_Send");
  report.Mutable(0)->mutable_threads(0)->clear_waits_for();
  const std::string stacks_over =
      "activity: process 1000 sends a stack over 64 frames or a frame or "
      "error over 4096 bytes";
  v1::ThreadActivity* t = report.Mutable(0)->mutable_threads(0);
  for (int i = 0; i < 64; ++i) t->add_python_stack("f (a.py:1)");
  EXPECT_TRUE(ActivityBoard::Check(report).ok());
  t->add_python_stack("f (a.py:1)");
  EXPECT_EQ(ActivityBoard::Check(report).message(), stacks_over);
  t->clear_python_stack();
  t->add_stack(std::string(4097, 'f'));
  EXPECT_EQ(ActivityBoard::Check(report).message(), stacks_over);
  t->clear_stack();
  t->set_stack_error(std::string(4097, 'e'));
  EXPECT_EQ(ActivityBoard::Check(report).message(), stacks_over);
  t->clear_stack_error();
  v1::StepTime* step = report.Mutable(0)->add_steps();
  step->set_step(7);
  step->set_dur_ns(100);
  step->set_comm_ns(101);
  EXPECT_EQ(ActivityBoard::Check(report).message(),
            "activity: process 1000's step 7 lasts 100 ns with 101 ns of "
            "communication (0 <= communication <= step)");
  step->set_comm_ns(100);
  EXPECT_TRUE(ActivityBoard::Check(report).ok());
  v1::PeerTime* peer = step->add_peers();
  peer->set_peer(3);
  peer->set_ns(10);
  peer->set_bytes(0);
  EXPECT_EQ(ActivityBoard::Check(report).message(),
            "activity: process 1000's step 7: peer 3 with 10 ns and 0 bytes "
            "(a rank >= 0, ns >= 0, bytes > 0)");
  peer->set_bytes(8);
  peer->set_peer(-1);
  EXPECT_FALSE(ActivityBoard::Check(report).ok());
  peer->set_peer(3);
  EXPECT_TRUE(ActivityBoard::Check(report).ok());
  for (int i = 0; i < 8; ++i) *step->add_peers() = *peer;
  EXPECT_EQ(ActivityBoard::Check(report).message(),
            "activity: process 1000's step 7 with 9 peers: at most 8");
  step->clear_peers();
  for (int i = 0; i < 1024; ++i) *report.Mutable(0)->add_steps() = *step;
  EXPECT_EQ(ActivityBoard::Check(report).message(),
            "activity: process 1000 with 1025 steps: at most 1024");
  report.Mutable(0)->clear_steps();
  for (int i = 0; i < 64; ++i) report.Mutable(0)->add_threads();
  EXPECT_EQ(ActivityBoard::Check(report).message(),
            "activity: process 1000 with 65 threads: at most 64");
  report.Mutable(0)->clear_threads();
  for (int i = 0; i < 4096; ++i) *report.Add() = Process("j", i);
  EXPECT_EQ(ActivityBoard::Check(report).message(),
            "activity of 4097 processes: at most 4096 a report");
}

}  // namespace
}  // namespace meridian
