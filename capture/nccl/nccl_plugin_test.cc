// libnccl-profiler-meridian.so as NCCL uses it: dlopened (RTLD_LOCAL), its
// tables looked up by name, driven with NCCL's structures, recording into
// a stand-in for libmeridian_probe.so (fake_capture_abi.h).
#include <dlfcn.h>

#include "capture/nccl/nccl_profiler_abi.h"
#include "gtest/gtest.h"
#include "testing/fake_capture_abi.h"

namespace meridian {
namespace {

class NcclPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    library_ = dlopen("capture/nccl/libnccl-profiler-meridian.so",
                      RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library_, nullptr) << dlerror();
    fake_capture::Clear();
  }
  void TearDown() override {
    if (library_ != nullptr) dlclose(library_);
  }
  void* library_ = nullptr;
};

TEST_F(NcclPluginTest, ExportsOnlyTheTablesNcclLooksFor) {
  EXPECT_NE(dlsym(library_, "ncclProfiler_v5"), nullptr);
  EXPECT_NE(dlsym(library_, "ncclProfiler_v4"), nullptr);
  EXPECT_EQ(dlsym(library_, "ncclProfiler_v6"), nullptr);
  EXPECT_EQ(dlsym(library_, "meridian_capture_emit"), nullptr);
}

TEST_F(NcclPluginTest, Version5RecordsACollective) {
  auto* v5 = static_cast<nccl::ProfilerV5*>(dlsym(library_, "ncclProfiler_v5"));
  ASSERT_NE(v5, nullptr);
  EXPECT_STREQ(v5->name, "Meridian");
  void* comm = nullptr;
  int mask = 0;
  ASSERT_EQ(v5->init(&comm, 0xabcULL, &mask, "dp", 2, 8, 3, nullptr),
            nccl::kSuccess);
  EXPECT_EQ(mask, nccl::kColl | nccl::kP2p | nccl::kKernelCh);

  nccl::EventDescrV5 coll{};
  coll.type = nccl::kColl;
  coll.coll.seq = 41;
  coll.coll.func = "AllGather";
  coll.coll.count = 8;
  coll.coll.datatype = "ncclInt64";
  coll.coll.channels = 1;
  coll.coll.algorithm = "RING";
  coll.coll.protocol = "LL";
  fake_capture::SetClock(100);
  void* op = nullptr;
  ASSERT_EQ(v5->start_event(comm, &op, &coll), nccl::kSuccess);
  fake_capture::SetClock(150);
  ASSERT_EQ(v5->stop_event(op), nccl::kSuccess);
  nccl::EventDescrV5 channel{};
  channel.type = nccl::kKernelCh;
  channel.parent = op;
  channel.kernel_ch.gpu_timer = 5000;
  fake_capture::SetClock(300);
  void* ch = nullptr;
  ASSERT_EQ(v5->start_event(nullptr, &ch, &channel), nccl::kSuccess);
  nccl::EventStateArgs args{};
  args.kernel_ch.gpu_timer = 5900;
  fake_capture::SetClock(1300);
  ASSERT_EQ(v5->record_event_state(ch, nccl::kKernelChStop, &args),
            nccl::kSuccess);
  ASSERT_EQ(v5->stop_event(ch), nccl::kSuccess);
  ASSERT_EQ(v5->finalize(comm), nccl::kSuccess);

  const std::vector<ProbeRecord> records = fake_capture::Records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(fake_capture::NameOf(records[0].name), "ncclAllGather");
  EXPECT_EQ(records[0].start_ns, 100);
  EXPECT_EQ(records[0].dur_ns, 50);
  const ProbeRecord& exec = records[1];
  EXPECT_EQ(fake_capture::NameOf(exec.name), "AllGather");
  EXPECT_EQ(fake_capture::NameOf(exec.queue), "GPU NCCL dp (0000000000000abc)");
  EXPECT_EQ(exec.start_ns, 5000 - 4700);  // host - GPU is at least 300 - 5000
  EXPECT_EQ(exec.dur_ns, 900);
  EXPECT_EQ(exec.seq, 41u);
  EXPECT_EQ(exec.bytes, 64);
  EXPECT_EQ(exec.comm_size, 8u);
  EXPECT_EQ(fake_capture::NameOf(exec.args),
            "algo=RING;proto=LL;channels=1;count=8;datatype=ncclInt64;rank=3");
}

TEST_F(NcclPluginTest, Version4TakesItsOwnArgumentOrderAndDescriptor) {
  auto* v4 = static_cast<nccl::ProfilerV4*>(dlsym(library_, "ncclProfiler_v4"));
  ASSERT_NE(v4, nullptr);
  void* comm = nullptr;
  int mask = 0;
  ASSERT_EQ(v4->init(&comm, &mask, "", 0x77ULL, 1, 2, 0, nullptr),
            nccl::kSuccess);
  EXPECT_EQ(mask, nccl::kColl | nccl::kP2p | nccl::kKernelCh);
  nccl::EventDescrV4 recv{};
  recv.type = nccl::kP2p;
  recv.p2p.func = "Recv";
  recv.p2p.count = 3;
  recv.p2p.datatype = "ncclFloat64";
  recv.p2p.peer = 1;
  recv.p2p.channels = 0;  // no channel will report: done when enqueued
  void* op = nullptr;
  ASSERT_EQ(v4->start_event(comm, &op, &recv), nccl::kSuccess);
  ASSERT_EQ(v4->stop_event(op), nccl::kSuccess);
  const std::vector<ProbeRecord> records = fake_capture::Records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(fake_capture::NameOf(records[1].name), "Recv");
  EXPECT_EQ(fake_capture::NameOf(records[1].queue),
            "GPU NCCL 0000000000000077");
  EXPECT_EQ(records[1].peer, 1);
  EXPECT_EQ(records[1].bytes, 24);
  EXPECT_EQ(records[1].comm, 0x77u);
  EXPECT_EQ(fake_capture::NameOf(records[1].args),
            "channels=0;count=3;datatype=ncclFloat64;rank=0;timing=enqueue");
}

}  // namespace
}  // namespace meridian
