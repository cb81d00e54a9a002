// libnccl-profiler-meridian.so as NCCL uses it: dlopened (RTLD_LOCAL), its
// tables looked up by name, driven with NCCL's structures. This test
// program stands in for libmeridian_probe.so: it defines the capture ABI
// (capture_sink.h), which the plugin finds in the process.
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "agent/nccl/nccl_profiler_abi.h"
#include "agent/probe/capture_sink.h"
#include "gtest/gtest.h"

namespace {

std::mutex g_mutex;
std::vector<std::string> g_names;
std::vector<meridian::ProbeRecord> g_records;
int64_t g_now = 0;

std::string NameOf(uint32_t id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return id == 0 || id > g_names.size() ? "" : g_names[id - 1];
}

}  // namespace

extern "C" {
int meridian_capture_recording(void) { return 1; }
uint32_t meridian_capture_name(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (size_t i = 0; i < g_names.size(); ++i) {
    if (g_names[i] == name) return static_cast<uint32_t>(i + 1);
  }
  g_names.push_back(name);
  return static_cast<uint32_t>(g_names.size());
}
void meridian_capture_emit(const meridian::ProbeRecord* record, int) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_records.push_back(*record);
}
int64_t meridian_capture_now_ns(void) { return g_now; }
int meridian_capture_step(int64_t*) { return 0; }
}

namespace meridian {
namespace {

class NcclPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    library_ = dlopen("agent/nccl/libnccl-profiler-meridian.so",
                      RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library_, nullptr) << dlerror();
    g_records.clear();
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
  g_now = 100;
  void* op = nullptr;
  ASSERT_EQ(v5->start_event(comm, &op, &coll), nccl::kSuccess);
  g_now = 150;
  ASSERT_EQ(v5->stop_event(op), nccl::kSuccess);
  nccl::EventDescrV5 channel{};
  channel.type = nccl::kKernelCh;
  channel.parent = op;
  channel.kernel_ch.gpu_timer = 5000;
  g_now = 300;
  void* ch = nullptr;
  ASSERT_EQ(v5->start_event(nullptr, &ch, &channel), nccl::kSuccess);
  nccl::EventStateArgs args{};
  args.kernel_ch.gpu_timer = 5900;
  g_now = 1300;
  ASSERT_EQ(v5->record_event_state(ch, nccl::kKernelChStop, &args),
            nccl::kSuccess);
  ASSERT_EQ(v5->stop_event(ch), nccl::kSuccess);
  ASSERT_EQ(v5->finalize(comm), nccl::kSuccess);

  ASSERT_EQ(g_records.size(), 2u);
  EXPECT_EQ(NameOf(g_records[0].name), "ncclAllGather");
  EXPECT_EQ(g_records[0].start_ns, 100);
  EXPECT_EQ(g_records[0].dur_ns, 50);
  const ProbeRecord& exec = g_records[1];
  EXPECT_EQ(NameOf(exec.name), "AllGather");
  EXPECT_EQ(NameOf(exec.queue), "GPU NCCL dp (0000000000000abc)");
  EXPECT_EQ(exec.start_ns, 5000 - 4700);  // host - GPU is at least 300 - 5000
  EXPECT_EQ(exec.dur_ns, 900);
  EXPECT_EQ(exec.seq, 41u);
  EXPECT_EQ(exec.bytes, 64);
  EXPECT_EQ(exec.comm_size, 8u);
  EXPECT_EQ(NameOf(exec.args),
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
  ASSERT_EQ(g_records.size(), 2u);
  EXPECT_EQ(NameOf(g_records[1].name), "Recv");
  EXPECT_EQ(NameOf(g_records[1].queue), "GPU NCCL 0000000000000077");
  EXPECT_EQ(g_records[1].peer, 1);
  EXPECT_EQ(g_records[1].bytes, 24);
  EXPECT_EQ(g_records[1].comm, 0x77u);
  EXPECT_EQ(NameOf(g_records[1].args),
            "channels=0;count=3;datatype=ncclFloat64;rank=0;timing=enqueue");
}

}  // namespace
}  // namespace meridian
