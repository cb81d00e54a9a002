#include "query/analysis/job_health.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kS = 1000000000;
constexpr uint64_t kWorld = 0x77;

// A rank whose one thread is in `call` (empty: none) for `for_ns`, having
// left its last call `idle_ns` ago.
LiveProcess Rank(int32_t rank, std::string call, int64_t for_ns,
                 int64_t idle_ns, uint64_t seq = 0, int32_t peer = -1) {
  LiveProcess p;
  p.node = "n" + std::to_string(rank / 2);
  p.sampled_ago_ns = kS / 2;
  p.activity.set_job("j");
  p.activity.set_rank(rank);
  p.activity.set_pid(100 + rank);
  v1::ThreadActivity* t = p.activity.add_threads();
  t->set_tid(100 + rank);
  t->set_idle_ns(idle_ns);
  t->set_peer(-1);
  t->set_tag(-1);
  if (!call.empty()) {
    t->set_call(call);
    t->set_category(v1::CATEGORY_MPI);
    t->set_call_ns(for_ns);
    t->set_comm(kWorld);
    t->set_comm_size(4);
    if (peer >= 0 || call == "MPI_Send" || call == "MPI_Recv") {
      t->set_peer(peer);
    } else {
      t->set_has_seq(true);
      t->set_seq(seq);
      t->set_bytes(8);
    }
  }
  return p;
}

// `p`, its thread in MPI_Wait for a request of the operation `op`.
LiveProcess Waiting(LiveProcess p, const std::string& op) {
  p.activity.mutable_threads(0)->set_waits_for(op);
  return p;
}

std::vector<int32_t> Of(const google::protobuf::RepeatedField<int32_t>& f) {
  return std::vector<int32_t>(f.begin(), f.end());
}

TEST(JobHealthTest, ARankStuckInItsOwnCode) {
  std::vector<LiveProcess> job = {
      Rank(0, "MPI_Allreduce", 9 * kS, -1, 9),
      Rank(1, "MPI_Allreduce", 9 * kS, -1, 9),
      Rank(2, "", 0, 10 * kS),
      Rank(3, "MPI_Allreduce", 8 * kS, -1, 9),
  };
  v1::HealthReply h = DiagnoseHealth("j", job, 5 * kS);
  EXPECT_EQ(h.state(), "stalled");
  EXPECT_EQ(h.stalled_for_ns(),
            8 * kS + kS / 2);  // rank 3's, sampled 0.5 s ago
  ASSERT_EQ(h.stalls_size(), 1);
  const v1::HealthStall& s = h.stalls(0);
  EXPECT_EQ(s.kind(), "missing");
  EXPECT_EQ(s.op(), "MPI_Allreduce");
  EXPECT_EQ(s.comm(), kWorld);
  EXPECT_EQ(s.seq(), 9u);
  EXPECT_EQ(Of(s.waiting_ranks()), (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(Of(s.suspect_ranks()), (std::vector<int32_t>{2}));
  ASSERT_EQ(s.ranks_size(), 4);
  EXPECT_EQ(s.ranks(2).rank(), 2);
  EXPECT_EQ(s.ranks(2).in(), "");
  EXPECT_EQ(s.ranks(2).in_for_ns(), 10 * kS + kS / 2);
  EXPECT_EQ(s.ranks(2).node(), "n1");
  EXPECT_EQ(s.ranks(2).pid(), 102);
  EXPECT_EQ(s.ranks(0).in(), "MPI_Allreduce");
  EXPECT_EQ(s.ranks(0).category(), "mpi");
  EXPECT_EQ(h.ranks_size(), 4);
}

TEST(JobHealthTest, AnotherCollectiveAtTheSameSequence) {
  std::vector<LiveProcess> job = {
      Rank(0, "MPI_Allreduce", 9 * kS, -1, 9),
      Rank(1, "MPI_Allreduce", 9 * kS, -1, 9),
      Rank(2, "MPI_Bcast", 9 * kS, -1, 9, 0),
      Rank(3, "MPI_Allreduce", 9 * kS, -1, 9),
  };
  job[2].activity.mutable_threads(0)->set_has_seq(true);
  job[2].activity.mutable_threads(0)->set_seq(9);
  v1::HealthReply h = DiagnoseHealth("j", job, 5 * kS);
  EXPECT_EQ(h.state(), "stalled");
  ASSERT_EQ(h.stalls_size(), 1);
  const v1::HealthStall& s = h.stalls(0);
  EXPECT_EQ(s.kind(), "mismatch");
  EXPECT_EQ(s.op(), "MPI_Allreduce");
  EXPECT_EQ(Of(s.waiting_ranks()), (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(Of(s.suspect_ranks()), (std::vector<int32_t>{2}));
  EXPECT_EQ(s.ranks(2).in(), "MPI_Bcast");
  EXPECT_EQ(s.ranks(2).peer(), 0);
}

TEST(JobHealthTest, TwoRanksSendingToEachOther) {
  std::vector<LiveProcess> job = {
      Rank(0, "MPI_Send", 9 * kS, -1, 0, 1),
      Rank(1, "MPI_Send", 9 * kS, -1, 0, 0),
  };
  v1::HealthReply h = DiagnoseHealth("j", job, 5 * kS);
  EXPECT_EQ(h.state(), "stalled");
  ASSERT_EQ(h.stalls_size(), 1);
  const v1::HealthStall& s = h.stalls(0);
  EXPECT_EQ(s.kind(), "p2p");
  EXPECT_EQ(s.op(), "MPI_Send");
  EXPECT_EQ(Of(s.waiting_ranks()), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(Of(s.suspect_ranks()), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(s.ranks_size(), 2);
}

TEST(JobHealthTest, AMatchedSendIsNoStall) {
  std::vector<LiveProcess> job = {
      Rank(0, "MPI_Send", 9 * kS, -1, 0, 1),
      Rank(1, "MPI_Recv", 9 * kS, -1, 0, 0),
  };
  v1::HealthReply h = DiagnoseHealth("j", job, 5 * kS);
  EXPECT_EQ(h.state(), "stalled");  // nobody progresses
  EXPECT_EQ(h.stalls_size(), 0);    // but nothing unmatched is seen
}

// MPI_Wait stands for its request's operation: two ranks waiting for their
// MPI_Isends to each other are a p2p stall of MPI_Isend; a wait for an
// MPI_Irecv from a rank in MPI_Send to it is matched; waits for different
// non-blocking collectives at one sequence number are a mismatch.
TEST(JobHealthTest, AWaitIsItsRequestsOperation) {
  std::vector<LiveProcess> job = {
      Waiting(Rank(0, "MPI_Wait", 9 * kS, -1, 0, 1), "MPI_Isend"),
      Waiting(Rank(1, "MPI_Wait", 9 * kS, -1, 0, 0), "MPI_Isend"),
  };
  v1::HealthReply h = DiagnoseHealth("j", job, 5 * kS);
  ASSERT_EQ(h.stalls_size(), 1);
  EXPECT_EQ(h.stalls(0).kind(), "p2p");
  EXPECT_EQ(h.stalls(0).op(), "MPI_Isend");
  EXPECT_EQ(Of(h.stalls(0).waiting_ranks()), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(Of(h.stalls(0).suspect_ranks()), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(h.stalls(0).ranks(0).in(), "MPI_Wait");
  EXPECT_EQ(h.stalls(0).ranks(0).waits_for(), "MPI_Isend");
  EXPECT_EQ(h.stalls(0).ranks(0).peer(), 1);

  job = {Waiting(Rank(0, "MPI_Wait", 9 * kS, -1, 0, 1), "MPI_Irecv"),
         Rank(1, "MPI_Send", 9 * kS, -1, 0, 0)};
  EXPECT_EQ(DiagnoseHealth("j", job, 5 * kS).stalls_size(), 0);

  job = {Waiting(Rank(0, "MPI_Wait", 9 * kS, -1, 4), "MPI_Iallreduce"),
         Waiting(Rank(1, "MPI_Wait", 9 * kS, -1, 4), "MPI_Iallreduce"),
         Waiting(Rank(2, "MPI_Wait", 9 * kS, -1, 4), "MPI_Ibcast"),
         Waiting(Rank(3, "MPI_Wait", 9 * kS, -1, 4), "MPI_Iallreduce")};
  h = DiagnoseHealth("j", job, 5 * kS);
  ASSERT_EQ(h.stalls_size(), 1);
  EXPECT_EQ(h.stalls(0).kind(), "mismatch");
  EXPECT_EQ(h.stalls(0).op(), "MPI_Iallreduce");
  EXPECT_EQ(Of(h.stalls(0).suspect_ranks()), (std::vector<int32_t>{2}));
  EXPECT_EQ(h.stalls(0).ranks(2).in(), "MPI_Wait");
  EXPECT_EQ(h.stalls(0).ranks(2).waits_for(), "MPI_Ibcast");
}

// Non-blocking collectives waited for out of order: rank 3 waits at seq 5,
// so it issued seq 4, where ranks 0 and 1 wait: rank 2 alone is missing.
// A wait for a one-sided MPI_Rput is no p2p stall.
TEST(JobHealthTest, ARankAtALaterCollectiveIsNoSuspect) {
  std::vector<LiveProcess> job = {
      Waiting(Rank(0, "MPI_Wait", 9 * kS, -1, 4), "MPI_Iallreduce"),
      Waiting(Rank(1, "MPI_Wait", 9 * kS, -1, 4), "MPI_Iallreduce"),
      Rank(2, "", 0, 10 * kS),
      Waiting(Rank(3, "MPI_Wait", 9 * kS, -1, 5), "MPI_Iallreduce"),
  };
  v1::HealthReply h = DiagnoseHealth("j", job, 5 * kS);
  ASSERT_GE(h.stalls_size(), 1);
  EXPECT_EQ(h.stalls(0).kind(), "missing");
  EXPECT_EQ(h.stalls(0).seq(), 4u);
  EXPECT_EQ(Of(h.stalls(0).waiting_ranks()), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(Of(h.stalls(0).suspect_ranks()), (std::vector<int32_t>{2}));

  job = {Waiting(Rank(0, "MPI_Wait", 9 * kS, -1, 0, 1), "MPI_Rput"),
         Rank(1, "", 0, 10 * kS)};
  h = DiagnoseHealth("j", job, 5 * kS);
  EXPECT_EQ(h.state(), "stalled");
  EXPECT_EQ(h.stalls_size(), 0);
}

TEST(JobHealthTest, ComputingLongIsRunning) {
  std::vector<LiveProcess> job = {Rank(0, "", 0, 90 * kS),
                                  Rank(1, "", 0, 90 * kS)};
  job[0].activity.mutable_threads(0)->set_phase("solve");
  job[0].activity.mutable_threads(0)->set_phase_ns(89 * kS);
  v1::HealthReply h = DiagnoseHealth("j", job, 5 * kS);
  EXPECT_EQ(h.state(), "running");
  EXPECT_EQ(h.stalled_for_ns(), 0);
  EXPECT_EQ(h.stalls_size(), 0);
  ASSERT_EQ(h.ranks_size(), 2);
  EXPECT_EQ(h.ranks(0).in(), "solve");
  EXPECT_EQ(h.ranks(0).in_for_ns(), 89 * kS + kS / 2);
  EXPECT_EQ(h.ranks(0).category(), "");
}

TEST(JobHealthTest, ProgressIsRunning) {
  std::vector<LiveProcess> job = {
      Rank(0, "MPI_Allreduce", 9 * kS, -1, 9),
      Rank(1, "", 0, kS),  // left a call a second ago
  };
  v1::HealthReply h = DiagnoseHealth("j", job, 5 * kS);
  EXPECT_EQ(h.state(), "running");
  EXPECT_EQ(h.stalls_size(), 0);
}

}  // namespace
}  // namespace meridian
