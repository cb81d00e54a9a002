#include "capture/nccl/nccl_profiler.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/recording_sink.h"

namespace meridian {
namespace {

constexpr uint64_t kHash = 0x3f2a00000000beefULL;
// The GPU clock reads 1,000,000 ns more than the host's here.
constexpr uint64_t kGpu = 1001000000;

nccl::EventDescrV5 AllReduce(uint64_t seq, uint8_t channels) {
  nccl::EventDescrV5 d{};
  d.type = nccl::kColl;
  d.rank = 1;
  d.coll.seq = seq;
  d.coll.func = "AllReduce";
  d.coll.count = 1024;
  d.coll.datatype = "ncclFloat32";
  d.coll.root = 0;
  d.coll.channels = channels;
  d.coll.algorithm = "RING";
  d.coll.protocol = "SIMPLE";
  return d;
}

nccl::EventDescrV5 Channel(void* parent, uint8_t channel, uint64_t timer) {
  nccl::EventDescrV5 d{};
  d.type = nccl::kKernelCh;
  d.parent = parent;
  d.kernel_ch.channel = channel;
  d.kernel_ch.gpu_timer = timer;
  return d;
}

class NcclProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int mask = 0;
    ASSERT_EQ(profiler_.Init(&comm_, kHash, &mask, "", 1, 2, 1),
              nccl::kSuccess);
    EXPECT_EQ(mask, nccl::kColl | nccl::kP2p | nccl::kKernelCh);
    ASSERT_NE(comm_, nullptr);
  }

  void* Start(nccl::EventDescrV5 descr, void* context) {
    void* handle = nullptr;
    EXPECT_EQ(profiler_.StartEvent(context, &handle, &descr), nccl::kSuccess);
    return handle;
  }
  void StopChannel(void* channel, uint64_t timer) {
    nccl::EventStateArgs args{};
    args.kernel_ch.gpu_timer = timer;
    EXPECT_EQ(profiler_.RecordEventState(channel, nccl::kKernelChStop, &args),
              nccl::kSuccess);
    EXPECT_EQ(profiler_.StopEvent(channel), nccl::kSuccess);
  }

  RecordingSink sink_;
  NcclProfiler profiler_{&sink_};
  void* comm_ = nullptr;
};

TEST_F(NcclProfilerTest, ACollectiveIsItsLaunchAndItsGpuExecution) {
  sink_.set_step(12);
  sink_.now_ns = 1000;
  void* coll = Start(AllReduce(7, 2), comm_);
  ASSERT_NE(coll, nullptr);
  sink_.now_ns = 1400;
  ASSERT_EQ(profiler_.StopEvent(coll), nccl::kSuccess);  // enqueued
  sink_.set_step(-1);  // the step ended before the kernel reported

  // The proxy sees channel 0 start 300 ns late, channel 1 200 ns late.
  sink_.now_ns = 2300;
  void* ch0 = Start(Channel(coll, 0, kGpu + 2000), nullptr);
  sink_.now_ns = 2300;
  void* ch1 = Start(Channel(coll, 1, kGpu + 2100), nullptr);
  ASSERT_NE(ch0, nullptr);
  ASSERT_NE(ch1, nullptr);
  sink_.now_ns = 9000;
  StopChannel(ch0, kGpu + 7000);
  EXPECT_EQ(sink_.Take().size(), 1u);  // only the launch, so far
  sink_.now_ns = 9000;
  StopChannel(ch1, kGpu + 7200);

  std::vector<RecordingSink::Emitted> out = sink_.Take();
  ASSERT_EQ(out.size(), 1u);
  const ProbeRecord& exec = out[0].record;
  EXPECT_FALSE(out[0].stamp_step);
  EXPECT_EQ(sink_.NameOf(exec.name), "AllReduce");
  EXPECT_EQ(exec.category, 2);  // NCCL
  EXPECT_EQ(sink_.NameOf(exec.queue), "GPU NCCL 3f2a00000000beef");
  // Host minus GPU is smallest for channel 1's start (seen 200 ns late):
  // the execution starts at host 2000 + 200 and lasts 7200 - 2000.
  EXPECT_EQ(exec.start_ns, 2200);
  EXPECT_EQ(exec.dur_ns, 5200);
  EXPECT_EQ(exec.flags, ProbeRecord::kGpuTrack | ProbeRecord::kHasSeq |
                            ProbeRecord::kHasStep);
  EXPECT_EQ(exec.step, 12);
  EXPECT_EQ(exec.seq, 7u);
  EXPECT_EQ(exec.comm, kHash);
  EXPECT_EQ(exec.comm_size, 2u);
  EXPECT_EQ(exec.bytes, 4096);
  EXPECT_EQ(sink_.NameOf(exec.args),
            "algo=RING;proto=SIMPLE;channels=2;count=1024;"
            "datatype=ncclFloat32;rank=1");
  EXPECT_EQ(exec.correlation >> 62, 1u);
  EXPECT_EQ(profiler_.gpu_timed(), 1u);
  EXPECT_EQ(profiler_.enqueue_timed(), 0u);
}

TEST_F(NcclProfilerTest, TheLaunchIsOnTheCallingThreadWithTheSameCorrelation) {
  sink_.now_ns = 1000;
  void* coll = Start(AllReduce(1, 1), comm_);
  sink_.now_ns = 1400;
  // The kernel reports before the enqueue returns: any order completes.
  void* ch = Start(Channel(coll, 0, kGpu + 1100), nullptr);
  StopChannel(ch, kGpu + 1300);
  EXPECT_TRUE(sink_.Take().empty());
  ASSERT_EQ(profiler_.StopEvent(coll), nccl::kSuccess);
  std::vector<RecordingSink::Emitted> out = sink_.Take();
  ASSERT_EQ(out.size(), 2u);
  const ProbeRecord& launch = out[0].record;
  EXPECT_TRUE(out[0].stamp_step);
  EXPECT_EQ(sink_.NameOf(launch.name), "ncclAllReduce");
  EXPECT_EQ(launch.category, 7);  // CUDA_RUNTIME
  EXPECT_EQ(launch.start_ns, 1000);
  EXPECT_EQ(launch.dur_ns, 400);
  EXPECT_EQ(launch.flags, 0);
  EXPECT_EQ(launch.correlation, out[1].record.correlation);
}

TEST_F(NcclProfilerTest, PointToPointCarriesItsPeer) {
  nccl::EventDescrV5 send{};
  send.type = nccl::kP2p;
  send.p2p.func = "Send";
  send.p2p.count = 10;
  send.p2p.datatype = "ncclBfloat16";
  send.p2p.peer = 0;
  send.p2p.channels = 1;
  void* op = Start(send, comm_);
  void* ch = Start(Channel(op, 4, kGpu + 10), nullptr);
  StopChannel(ch, kGpu + 50);
  ASSERT_EQ(profiler_.StopEvent(op), nccl::kSuccess);
  std::vector<RecordingSink::Emitted> out = sink_.Take();
  ASSERT_EQ(out.size(), 2u);
  const ProbeRecord& exec = out[1].record;
  EXPECT_EQ(sink_.NameOf(exec.name), "Send");
  EXPECT_EQ(exec.flags, ProbeRecord::kGpuTrack | ProbeRecord::kHasPeer);
  EXPECT_EQ(exec.peer, 0);
  EXPECT_EQ(exec.bytes, 20);
  EXPECT_EQ(sink_.NameOf(exec.args),
            "channels=1;count=10;datatype=ncclBfloat16;rank=1");
}

TEST_F(NcclProfilerTest, WithoutKernelTimersFinalizeRecordsTheEnqueue) {
  sink_.now_ns = 500;
  nccl::EventDescrV5 bcast = AllReduce(3, 2);
  bcast.coll.func = "Broadcast";
  bcast.coll.root = 1;
  void* coll = Start(bcast, comm_);
  sink_.now_ns = 800;
  ASSERT_EQ(profiler_.StopEvent(coll), nccl::kSuccess);
  EXPECT_EQ(sink_.Take().size(), 1u);  // the launch; the kernel never says
  ASSERT_EQ(profiler_.Finalize(comm_), nccl::kSuccess);
  std::vector<RecordingSink::Emitted> out = sink_.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].record.start_ns, 500);
  EXPECT_EQ(out[0].record.dur_ns, 300);
  EXPECT_EQ(out[0].record.flags, ProbeRecord::kGpuTrack | ProbeRecord::kHasSeq |
                                     ProbeRecord::kHasPeer);
  EXPECT_EQ(out[0].record.peer, 1);  // the root
  EXPECT_EQ(sink_.NameOf(out[0].record.args),
            "algo=RING;proto=SIMPLE;channels=2;count=1024;"
            "datatype=ncclFloat32;rank=1;root=1;timing=enqueue");
  EXPECT_EQ(profiler_.enqueue_timed(), 1u);
  // A late channel of the finalized operation is ignored.
  void* late = nullptr;
  nccl::EventDescrV5 ch = Channel(coll, 0, kGpu);
  ASSERT_EQ(profiler_.StartEvent(nullptr, &late, &ch), nccl::kSuccess);
  EXPECT_EQ(late, nullptr);
  EXPECT_EQ(profiler_.StopEvent(coll), nccl::kSuccess);
  EXPECT_TRUE(sink_.Take().empty());
}

TEST_F(NcclProfilerTest, ASlotNeededAgainRetiresItsOperation) {
  void* first = Start(AllReduce(0, 1), comm_);
  ASSERT_EQ(profiler_.StopEvent(first), nccl::kSuccess);
  for (uint32_t i = 1; i < NcclProfiler::kSlots; ++i) {
    void* op = Start(AllReduce(i, 0), comm_);  // no channels: done at once
    ASSERT_EQ(profiler_.StopEvent(op), nccl::kSuccess);
  }
  sink_.Take();
  void* again = Start(AllReduce(NcclProfiler::kSlots, 1), comm_);
  ASSERT_NE(again, nullptr);
  std::vector<RecordingSink::Emitted> out = sink_.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].record.seq, 0u);  // the first, retired
  // Its handle no longer works; the new operation's does.
  void* stale = nullptr;
  nccl::EventDescrV5 ch = Channel(first, 0, kGpu);
  ASSERT_EQ(profiler_.StartEvent(nullptr, &stale, &ch), nccl::kSuccess);
  EXPECT_EQ(stale, nullptr);
  EXPECT_EQ(profiler_.StopEvent(again), nccl::kSuccess);
  EXPECT_EQ(profiler_.enqueue_timed(), NcclProfiler::kSlots);
}

TEST_F(NcclProfilerTest, NothingIsRecordedOutsideTheTracingWindow) {
  sink_.recording = false;
  EXPECT_EQ(Start(AllReduce(0, 1), comm_), nullptr);
  EXPECT_TRUE(sink_.Take().empty());
}

TEST_F(NcclProfilerTest, UnknownHandlesAndEventsAreIgnored) {
  EXPECT_EQ(profiler_.StopEvent(nullptr), nccl::kSuccess);
  EXPECT_EQ(profiler_.StopEvent(reinterpret_cast<void*>(0x12345678)),
            nccl::kSuccess);
  nccl::EventDescrV5 proxy{};
  proxy.type = nccl::kProxyOp;
  EXPECT_EQ(Start(proxy, comm_), nullptr);
  EXPECT_EQ(profiler_.RecordEventState(nullptr, nccl::kKernelChStop, nullptr),
            nccl::kSuccess);
  EXPECT_TRUE(sink_.Take().empty());
}

TEST(NcclProfilerWithoutProbeTest, AsksForNoEvents) {
  NcclProfiler profiler(nullptr);
  void* context = nullptr;
  int mask = -1;
  ASSERT_EQ(profiler.Init(&context, kHash, &mask, "x", 1, 1, 0),
            nccl::kSuccess);
  EXPECT_EQ(mask, 0);
  EXPECT_EQ(context, nullptr);
}

}  // namespace
}  // namespace meridian
