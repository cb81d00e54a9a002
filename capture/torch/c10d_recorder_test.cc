#include "capture/torch/c10d_recorder.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "testing/recording_sink.h"

namespace meridian {
namespace {

using Op = C10dRecorder::Op;

// Process group objects' stand-ins: only their addresses count.
int g_world;
int g_pair;
int g_unknown;

class C10dRecorderTest : public ::testing::Test {
 protected:
  C10dRecorderTest() : recorder_(&sink_) {
    EXPECT_TRUE(recorder_.RegisterGroup(&g_world, "0", "gloo", {0, 1, 2, 3}));
    EXPECT_TRUE(recorder_.RegisterGroup(&g_pair, "1", "gloo", {3, 1}));
  }

  // One operation as gloo runs it: the call returns, then the work begins
  // and completes on its worker thread.
  void Run(const C10dRecorder::Call& call, uint64_t handle, int64_t start,
           int64_t work_start, int64_t done) {
    sink_.now_ns = start;
    const uint64_t op = recorder_.Begin(call);
    ASSERT_NE(op, 0u);
    recorder_.CallEnd(op);
    sink_.now_ns = work_start;
    recorder_.WorkStart(handle, call.key, "gloo:all_reduce");
    sink_.now_ns = done;
    recorder_.WorkDone(handle);
  }

  RecordingSink sink_;
  C10dRecorder recorder_;
};

TEST(C10dRecorderOpTest, EveryOpIsNamedAndFoundByItsName) {
  for (int i = 0; i <= static_cast<int>(Op::kRecv); ++i) {
    Op op;
    ASSERT_TRUE(C10dRecorder::OpNamed(C10dRecorder::OpName(Op(i)), &op));
    EXPECT_EQ(op, Op(i));
  }
  Op op;
  EXPECT_TRUE(C10dRecorder::OpNamed("reduce_scatter", &op));
  EXPECT_EQ(op, Op::kReduceScatter);
  EXPECT_FALSE(C10dRecorder::OpNamed("allreduce_", &op));
  EXPECT_FALSE(C10dRecorder::OpNamed("", &op));
}

// Calls in flight: a C++ caller's operation (DDP's) is in flight until its
// call returns; one a waiting Python function makes (a synchronous
// all_reduce), until that function returns, its wait included.
TEST_F(C10dRecorderTest, AnOperationIsInFlightUntilItsCallOrItsWaiterReturns) {
  sink_.now_ns = 500;
  uint64_t op = recorder_.Begin({Op::kBroadcast, &g_pair, 64, 1, 0, 0x2000});
  ProbeRecord in;
  ASSERT_TRUE(sink_.InCall(&in));
  EXPECT_EQ(sink_.NameOf(in.name), "broadcast");
  EXPECT_EQ(in.start_ns, 500);
  EXPECT_EQ(in.bytes, 64);
  EXPECT_EQ(in.peer, 1);  // group rank 1 of [3, 1]
  EXPECT_EQ(in.comm_size, 2u);
  EXPECT_EQ(in.seq, 0u);
  recorder_.CallEnd(op);
  EXPECT_FALSE(sink_.InCall(nullptr));
  EXPECT_EQ(sink_.left(), 1);

  C10dRecorder::PythonCallBegin();
  op = recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 0x3000});
  recorder_.CallEnd(op);
  ASSERT_TRUE(sink_.InCall(&in));  // waiting for its work
  EXPECT_EQ(sink_.NameOf(in.name), "allreduce");
  recorder_.PythonCallEnd();
  EXPECT_FALSE(sink_.InCall(nullptr));
  EXPECT_EQ(sink_.left(), 2);
  // Not recording: nothing in flight, nothing left.
  sink_.recording = false;
  C10dRecorder::PythonCallBegin();
  EXPECT_EQ(recorder_.Begin({Op::kBarrier, &g_world, 0, -1, 0, 0}), 0u);
  recorder_.PythonCallEnd();
  EXPECT_FALSE(sink_.InCall(nullptr));
  EXPECT_EQ(sink_.left(), 2);
}

// An async_op=True call: its operation is in flight while the call runs;
// its record, taken as the call returns, is in flight again from when its
// work's wait begins until it returns.
TEST_F(C10dRecorderTest, AnAsynchronousOperationIsInFlightWhileWaitedFor) {
  ProbeRecord last;
  C10dRecorder::PythonCallBegin();  // the async call's wrapper
  EXPECT_FALSE(C10dRecorder::TakeLastBegun(&last));
  sink_.now_ns = 500;
  const uint64_t op =
      recorder_.Begin({Op::kAllreduce, &g_world, 4000, -1, 0, 0x4000});
  recorder_.CallEnd(op);
  EXPECT_TRUE(sink_.InCall(nullptr));
  recorder_.PythonCallEnd();
  EXPECT_FALSE(sink_.InCall(nullptr));
  ASSERT_TRUE(C10dRecorder::TakeLastBegun(&last));
  EXPECT_FALSE(C10dRecorder::TakeLastBegun(&last));  // taken once
  EXPECT_EQ(sink_.NameOf(last.name), "allreduce");
  EXPECT_EQ(last.bytes, 4000);
  EXPECT_EQ(last.seq, 0u);
  // Another operation meanwhile, then the first's wait.
  recorder_.CallEnd(recorder_.Begin({Op::kBarrier, &g_world, 0, -1, 0, 0}));
  sink_.now_ns = 900;
  recorder_.WaitBegin(last);
  ProbeRecord in;
  ASSERT_TRUE(sink_.InCall(&in));
  EXPECT_EQ(sink_.NameOf(in.name), "allreduce");
  EXPECT_EQ(in.start_ns, 900);  // waiting since
  EXPECT_EQ(in.bytes, 4000);
  EXPECT_EQ(in.comm_size, 4u);
  EXPECT_EQ(in.seq, 0u);
  EXPECT_EQ(in.flags & ProbeRecord::kHasSeq, ProbeRecord::kHasSeq);
  recorder_.PythonCallEnd();
  EXPECT_FALSE(sink_.InCall(nullptr));
  // Recording stopped before the wait: not published.
  sink_.recording = false;
  recorder_.WaitBegin(last);
  EXPECT_FALSE(sink_.InCall(nullptr));
  recorder_.PythonCallEnd();
  // Not recorded: nothing to take (the barrier's before was forgotten at
  // the call's begin).
  C10dRecorder::PythonCallBegin();
  EXPECT_EQ(recorder_.Begin({Op::kBarrier, &g_world, 0, -1, 0, 0}), 0u);
  recorder_.PythonCallEnd();
  EXPECT_FALSE(C10dRecorder::TakeLastBegun(&last));
}

TEST_F(C10dRecorderTest, AnAllreduceIsOneSpanFromItsCallToItsWorksEnd) {
  sink_.set_step(7);
  Run({Op::kAllreduce, &g_world, 1597480, -1, 0, 0x1000}, 41, 1000, 1300, 9000);
  const auto emitted = sink_.Take();
  ASSERT_EQ(emitted.size(), 1u);
  const ProbeRecord& r = emitted[0].record;
  EXPECT_FALSE(emitted[0].stamp_step);
  EXPECT_EQ(r.start_ns, 1000);
  EXPECT_EQ(r.dur_ns, 8000);
  EXPECT_EQ(r.bytes, 1597480);
  EXPECT_EQ(r.category, 10);
  EXPECT_EQ(sink_.NameOf(r.name), "allreduce");
  EXPECT_EQ(sink_.NameOf(r.queue), "c10d group 0");
  EXPECT_EQ(sink_.NameOf(r.args),
            "backend=gloo;group=0;ranks=[0, 1, 2, 3];work=gloo:all_reduce");
  EXPECT_EQ(r.comm_size, 4u);
  EXPECT_NE(r.comm, 0u);
  EXPECT_EQ(r.seq, 0u);
  EXPECT_EQ(r.step, 7);
  EXPECT_EQ(r.flags, ProbeRecord::kHasSeq | ProbeRecord::kHasStep);
  EXPECT_EQ(recorder_.counters().recorded, 1u);
  EXPECT_EQ(recorder_.counters().enqueue_only, 0u);
}

TEST_F(C10dRecorderTest, AWorkThatBeginsWithinTheCallIsMatchedToo) {
  sink_.now_ns = 10;
  const uint64_t op =
      recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 0x2000});
  sink_.now_ns = 12;
  recorder_.WorkStart(7, 0x2000, "gloo:all_reduce");
  sink_.now_ns = 20;
  recorder_.WorkDone(7);
  recorder_.WorkDone(7);  // a second end of the same work: nothing
  recorder_.CallEnd(op);  // after the work completed: nothing more
  recorder_.Flush();
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].record.dur_ns, 10);
}

TEST_F(C10dRecorderTest, WorksAreMatchedByTheirTensorsInWhateverOrderTheyRun) {
  // Two buckets enqueued, then run by two worker threads, the second first.
  sink_.now_ns = 100;
  const uint64_t a =
      recorder_.Begin({Op::kAllreduce, &g_world, 1071144, -1, 0, 0xa0});
  recorder_.CallEnd(a);
  sink_.now_ns = 110;
  const uint64_t b =
      recorder_.Begin({Op::kAllreduce, &g_world, 526336, -1, 0, 0xb0});
  recorder_.CallEnd(b);
  recorder_.WorkStart(2, 0xb0, "gloo:all_reduce");
  recorder_.WorkStart(1, 0xa0, "gloo:all_reduce");
  sink_.now_ns = 500;
  recorder_.WorkDone(2);
  sink_.now_ns = 700;
  recorder_.WorkDone(1);
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].record.bytes, 526336);
  EXPECT_EQ(e[0].record.seq, 1u);
  EXPECT_EQ(e[0].record.start_ns, 110);
  EXPECT_EQ(e[0].record.dur_ns, 390);
  EXPECT_EQ(e[1].record.bytes, 1071144);
  EXPECT_EQ(e[1].record.seq, 0u);
  EXPECT_EQ(e[1].record.dur_ns, 600);
}

TEST_F(C10dRecorderTest, EachGroupCountsItsOwnCollectivesAndPointToPointNone) {
  Run({Op::kAllreduce, &g_world, 8, -1, 0, 1}, 1, 0, 1, 2);
  Run({Op::kBroadcast, &g_pair, 8, 1, 0, 2}, 2, 0, 1, 2);
  Run({Op::kSend, &g_world, 4, 2, 5, 3}, 3, 0, 1, 2);
  Run({Op::kBarrier, &g_world, 0, -1, 0, 0}, 4, 0, 1, 2);
  Run({Op::kReduce, &g_pair, 8, 0, 0, 5}, 5, 0, 1, 2);
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].record.seq, 0u);
  EXPECT_EQ(e[1].record.seq, 0u);
  // The pair's root, group rank 1, is world rank 1; its rank 0 is world 3.
  EXPECT_EQ(e[1].record.peer, 1);
  EXPECT_EQ(e[1].record.flags & ProbeRecord::kHasPeer, ProbeRecord::kHasPeer);
  EXPECT_EQ(e[4].record.peer, 3);
  EXPECT_EQ(e[4].record.seq, 1u);
  // The send: no seq, the peer a world rank, the tag kept.
  EXPECT_EQ(e[2].record.flags, ProbeRecord::kHasPeer | ProbeRecord::kHasTag);
  EXPECT_EQ(e[2].record.peer, 2);
  EXPECT_EQ(e[2].record.tag, 5);
  EXPECT_EQ(e[3].record.seq, 1u);
  EXPECT_EQ(sink_.NameOf(e[3].record.name), "barrier");
  // Two groups, two ids; the same group's spans share one.
  EXPECT_NE(e[0].record.comm, e[1].record.comm);
  EXPECT_EQ(e[0].record.comm, e[3].record.comm);
  EXPECT_EQ(e[1].record.comm_size, 2u);
}

TEST_F(C10dRecorderTest, TheGroupIdIsTheSameInAnotherProcess) {
  const auto comm_of = [](C10dRecorder* recorder, RecordingSink* sink,
                          const void* key) {
    recorder->CallEnd(recorder->Begin({Op::kAllreduce, key, 8, -1, 0, 0}));
    recorder->Flush();
    return sink->Take().at(0).record.comm;
  };
  RecordingSink other_sink;
  C10dRecorder other(&other_sink);
  int other_key;
  ASSERT_TRUE(other.RegisterGroup(&other_key, "1", "gloo", {3, 1}));
  const uint64_t here = comm_of(&recorder_, &sink_, &g_pair);
  EXPECT_EQ(here, comm_of(&other, &other_sink, &other_key));
  // Another name or other members: another group.
  C10dRecorder third(&other_sink);
  int third_key;
  ASSERT_TRUE(third.RegisterGroup(&third_key, "1", "gloo", {1, 3}));
  EXPECT_NE(here, comm_of(&third, &other_sink, &third_key));
}

TEST_F(C10dRecorderTest, AnOperationNoWorkClaimsIsRecordedAsItsCall) {
  sink_.now_ns = 10;
  const uint64_t op = recorder_.Begin({Op::kBarrier, &g_world, 0, -1, 0, 0});
  sink_.now_ns = 25;
  recorder_.CallEnd(op);
  // A work of a backend no group has, and one of no waiting operation.
  recorder_.WorkStart(9, 0, "mpi:barrier");
  recorder_.WorkStart(9, 0x77, "gloo:barrier");
  EXPECT_TRUE(sink_.Take().empty());
  recorder_.Flush();
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].record.dur_ns, 15);
  EXPECT_EQ(sink_.NameOf(e[0].record.args),
            "backend=gloo;group=0;ranks=[0, 1, 2, 3];timing=enqueue");
  EXPECT_EQ(recorder_.counters().enqueue_only, 1u);
  recorder_.Flush();  // once
  EXPECT_TRUE(sink_.Take().empty());
}

TEST_F(C10dRecorderTest, AnUnclaimedSlotIsRecordedWhenTheRingComesRound) {
  const uint64_t first =
      recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 0x10});
  recorder_.CallEnd(first);
  for (uint32_t i = 1; i < C10dRecorder::kSlots; ++i) {
    Run({Op::kAllreduce, &g_world, 8, -1, 0, 0x100 + i}, i, 0, 1, 2);
  }
  EXPECT_EQ(sink_.Take().size(), C10dRecorder::kSlots - 1);
  // The next operation needs the first one's slot.
  recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 0x20});
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].record.seq, 0u);
  EXPECT_EQ(recorder_.counters().enqueue_only, 1u);
}

TEST_F(C10dRecorderTest, AnUnregisteredGroupIsRecordedButNeverMatched) {
  Run({Op::kAllreduce, &g_unknown, 8, -1, 0, 0x30}, 5, 0, 1, 2);
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].record.comm, 0u);
  EXPECT_EQ(e[0].record.flags & ProbeRecord::kHasSeq, 0);
  EXPECT_EQ(sink_.NameOf(e[0].record.queue), "c10d group (unregistered)");
  EXPECT_EQ(sink_.NameOf(e[0].record.args),
            "group=unregistered;work=gloo:all_reduce");
  EXPECT_EQ(recorder_.counters().unregistered, 1u);
}

TEST_F(C10dRecorderTest, AGroupOfMoreThan64RanksDoesNotListThem) {
  int big;
  std::vector<int> ranks(65);
  for (int i = 0; i < 65; ++i) ranks[i] = i;
  ASSERT_TRUE(recorder_.RegisterGroup(&big, "2", "nccl", ranks));
  C10dRecorder::Call call{Op::kAllreduce, &big, 8, -1, 0, 0x40};
  sink_.now_ns = 0;
  const uint64_t op = recorder_.Begin(call);
  recorder_.CallEnd(op);
  recorder_.WorkStart(3, 0x40, "nccl:all_reduce");
  recorder_.WorkDone(3);
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(sink_.NameOf(e[0].record.args),
            "backend=nccl;group=2;work=nccl:all_reduce");
  EXPECT_EQ(e[0].record.comm_size, 65u);
}

TEST_F(C10dRecorderTest, AGroupIsRegisteredOnceAndRefusedWhenItDiffers) {
  EXPECT_TRUE(recorder_.RegisterGroup(&g_world, "0", "gloo", {0, 1, 2, 3}));
  EXPECT_FALSE(recorder_.RegisterGroup(&g_world, "0", "gloo", {0, 1, 2}));
  EXPECT_FALSE(recorder_.RegisterGroup(&g_unknown, "2", "gloo", {}));
  EXPECT_FALSE(recorder_.RegisterGroup(nullptr, "2", "gloo", {0}));
}

TEST_F(C10dRecorderTest, SeqIsCountedWhileNotRecordingToo) {
  sink_.recording = false;
  EXPECT_EQ(recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 1}), 0u);
  sink_.recording = true;
  Run({Op::kAllreduce, &g_world, 8, -1, 0, 2}, 1, 0, 1, 2);
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].record.seq, 1u);
}

TEST_F(C10dRecorderTest, TheLaterOfTwoOperationsWithOneKeyIsClaimed) {
  sink_.now_ns = 0;
  const uint64_t first =
      recorder_.Begin({Op::kBroadcast, &g_world, 8, 0, 0, 0x50});
  recorder_.CallEnd(first);
  sink_.now_ns = 10;
  const uint64_t second =
      recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 0x50});
  recorder_.CallEnd(second);
  recorder_.WorkStart(1, 0x50, "gloo:all_reduce");
  recorder_.WorkStart(2, 0x50, "gloo:broadcast");  // nothing waits for it
  sink_.now_ns = 30;
  recorder_.WorkDone(1);
  recorder_.WorkDone(2);
  recorder_.Flush();
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(sink_.NameOf(e[0].record.name), "allreduce");
  EXPECT_EQ(e[0].record.dur_ns, 20);
  EXPECT_EQ(sink_.NameOf(e[1].record.name), "broadcast");
  EXPECT_EQ(sink_.NameOf(e[1].record.args),
            "backend=gloo;group=0;ranks=[0, 1, 2, 3];timing=enqueue");
}

TEST_F(C10dRecorderTest, ALateCallForAReusedSlotIsIgnored) {
  const uint64_t stale =
      recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 0x60});
  recorder_.WorkStart(1, 0x60, "gloo:all_reduce");
  recorder_.WorkDone(1);  // recorded, its slot freed
  for (uint32_t i = 1; i < C10dRecorder::kSlots; ++i) {
    Run({Op::kAllreduce, &g_world, 8, -1, 0, 0x1000 + i}, 100 + i, 0, 1, 2);
  }
  sink_.Take();
  // The same slot, a new generation, its call still going on.
  sink_.now_ns = 5;
  const uint64_t fresh =
      recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 0x70});
  ASSERT_NE(fresh, stale);
  EXPECT_EQ(fresh & 0xffffffffu, stale & 0xffffffffu);
  recorder_.CallEnd(stale);  // the old operation's: nothing
  recorder_.Flush();         // the fresh one is still in its call
  EXPECT_TRUE(sink_.Take().empty());
  sink_.now_ns = 9;
  recorder_.CallEnd(fresh);
  recorder_.Flush();
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].record.dur_ns, 4);
}

TEST_F(C10dRecorderTest, ADestroyedGroupsKeyMayNameANewGroup) {
  recorder_.UnregisterGroup(&g_pair);
  Run({Op::kAllreduce, &g_pair, 8, -1, 0, 0x80}, 1, 0, 1, 2);
  ASSERT_TRUE(recorder_.RegisterGroup(&g_pair, "2", "gloo", {0, 2}));
  Run({Op::kAllreduce, &g_pair, 8, -1, 0, 0x81}, 2, 0, 1, 2);
  const auto e = sink_.Take();
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].record.comm, 0u);  // between the two: unregistered
  EXPECT_EQ(sink_.NameOf(e[1].record.queue), "c10d group 2");
  EXPECT_EQ(e[1].record.seq, 0u);
}

TEST_F(C10dRecorderTest, NothingIsRecordedWhileNotRecording) {
  sink_.recording = false;
  EXPECT_EQ(recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 1}), 0u);
  C10dRecorder none(nullptr);
  EXPECT_EQ(none.Begin({Op::kAllreduce, &g_world, 8, -1, 0, 1}), 0u);
  EXPECT_FALSE(none.RegisterGroup(&g_world, "0", "gloo", {0}));
  EXPECT_TRUE(sink_.Take().empty());
}

// Threads issue operations whose works complete on other threads: each is
// recorded exactly once (run under TSan by tests/run.sh's subset).
TEST_F(C10dRecorderTest, ConcurrentCallersAndWorkersRecordEachOperationOnce) {
  constexpr int kThreads = 4;
  constexpr int kOps = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kOps; ++i) {
        const uint64_t key = (static_cast<uint64_t>(t) << 32) | (i + 1);
        const uint64_t op =
            recorder_.Begin({Op::kAllreduce, &g_world, 8, -1, 0, key});
        std::thread worker([this, key, t, i] {
          const uint64_t handle = (static_cast<uint64_t>(t) << 32) | (i + 1);
          recorder_.WorkStart(handle, key, "gloo:all_reduce");
          recorder_.WorkDone(handle);
        });
        recorder_.CallEnd(op);
        worker.join();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  recorder_.Flush();
  const auto e = sink_.Take();
  EXPECT_EQ(e.size(), static_cast<size_t>(kThreads * kOps));
  EXPECT_EQ(recorder_.counters().enqueue_only, 0u);
  std::vector<bool> seen(kThreads * kOps);
  for (const auto& emitted : e) {
    ASSERT_LT(emitted.record.seq, seen.size());
    EXPECT_FALSE(seen[emitted.record.seq]);
    seen[emitted.record.seq] = true;
  }
}

}  // namespace
}  // namespace meridian
