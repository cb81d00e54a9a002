// CUPTI records as CUDA 13's CUPTI lays them out, filled as CUPTI fills
// them, decoded without a GPU.
#include "capture/cupti/activity_decoder.h"

#include "gtest/gtest.h"
#include "testing/recording_sink.h"

namespace meridian {
namespace {

class ActivityDecoderTest : public ::testing::Test {
 protected:
  RecordingSink sink_;
  CudaApiTracer tracer_{&sink_};
  ActivityDecoder decoder_{&sink_, &tracer_};
};

TEST_F(ActivityDecoderTest, AKernelGoesOnItsStreamWithItsLaunchsStep) {
  // The launch, on the CPU, during step 3.
  sink_.set_step(3);
  tracer_.Enter(CudaApiTracer::Domain::kRuntime, 211);
  tracer_.Exit(CudaApiTracer::Domain::kRuntime, 211, "cudaLaunchKernel", 77);
  sink_.Take();
  sink_.set_step(-1);

  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 5000;
  k.end = 5750;
  k.deviceId = 0;
  k.streamId = 7;
  k.correlationId = 77;
  k.gridX = 128;
  k.gridY = 1;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 512;
  k.name = "_Z4gemmPfS_i";
  decoder_.Decode(reinterpret_cast<CUpti_Activity*>(&k));
  decoder_.Decode(reinterpret_cast<CUpti_Activity*>(&k));  // name cached

  std::vector<RecordingSink::Emitted> out = sink_.Take();
  ASSERT_EQ(out.size(), 2u);
  const ProbeRecord& r = out[0].record;
  EXPECT_EQ(sink_.NameOf(r.name), "gemm(float*, float*, int)");
  EXPECT_EQ(r.category, 3);  // CUDA_KERNEL
  EXPECT_EQ(r.start_ns, 5000);
  EXPECT_EQ(r.dur_ns, 750);
  EXPECT_EQ(sink_.NameOf(r.queue), "GPU 0 stream 7");
  EXPECT_EQ(r.flags, ProbeRecord::kGpuTrack | ProbeRecord::kHasStep);
  EXPECT_EQ(r.step, 3);
  EXPECT_EQ(r.correlation, 77u);
  EXPECT_EQ(sink_.NameOf(r.args),
            "grid=128,1,1;block=256,1,1;registers=32;smem=1536");
  EXPECT_FALSE(out[0].stamp_step);
  EXPECT_EQ(out[1].record.name, r.name);
  EXPECT_EQ(decoder_.decoded(), 2u);
}

TEST_F(ActivityDecoderTest, CopiesByDirectionPeerCopiesAndMemsets) {
  CUpti_ActivityMemcpy6 h2d{};
  h2d.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  h2d.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  h2d.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  h2d.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  h2d.bytes = 1 << 20;
  h2d.start = 100;
  h2d.end = 400;
  h2d.deviceId = 1;
  h2d.streamId = 13;
  h2d.correlationId = 5;
  CUpti_ActivityMemcpy6 d2h = h2d;
  d2h.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  d2h.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  d2h.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  CUpti_ActivityMemcpy6 d2d = h2d;
  d2d.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  CUpti_ActivityMemcpyPtoP4 peer{};
  peer.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  peer.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  peer.bytes = 4096;
  peer.start = 10;
  peer.end = 20;
  peer.deviceId = 0;
  peer.streamId = 3;
  peer.srcDeviceId = 0;
  peer.dstDeviceId = 1;
  peer.correlationId = 6;
  CUpti_ActivityMemset4 set{};
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.bytes = 64;
  set.start = 30;
  set.end = 31;
  set.deviceId = 0;
  set.streamId = 3;
  set.correlationId = 7;
  for (const void* record :
       {static_cast<const void*>(&h2d), static_cast<const void*>(&d2h),
        static_cast<const void*>(&d2d), static_cast<const void*>(&peer),
        static_cast<const void*>(&set)}) {
    decoder_.Decode(static_cast<const CUpti_Activity*>(record));
  }
  std::vector<RecordingSink::Emitted> out = sink_.Take();
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(sink_.NameOf(out[0].record.name), "Memcpy HtoD");
  EXPECT_EQ(out[0].record.category, 4);  // CUDA_MEMCPY
  EXPECT_EQ(out[0].record.bytes, 1 << 20);
  EXPECT_EQ(out[0].record.dur_ns, 300);
  EXPECT_EQ(sink_.NameOf(out[0].record.queue), "GPU 1 stream 13");
  EXPECT_EQ(sink_.NameOf(out[0].record.args), "src=pinned;dst=device");
  EXPECT_EQ(sink_.NameOf(out[1].record.name), "Memcpy DtoH");
  EXPECT_EQ(sink_.NameOf(out[1].record.args), "src=device;dst=pageable");
  EXPECT_EQ(sink_.NameOf(out[2].record.name), "Memcpy DtoD");
  EXPECT_EQ(sink_.NameOf(out[3].record.name), "Memcpy PtoP");
  EXPECT_EQ(sink_.NameOf(out[3].record.args), "src_device=0;dst_device=1");
  EXPECT_EQ(out[3].record.bytes, 4096);
  EXPECT_EQ(sink_.NameOf(out[4].record.name), "Memset");
  EXPECT_EQ(out[4].record.category, 5);  // CUDA_MEMSET
  EXPECT_EQ(out[4].record.bytes, 64);
  EXPECT_EQ(sink_.NameOf(out[4].record.queue), "GPU 0 stream 3");
  EXPECT_EQ(out[4].record.correlation, 7u);
}

TEST_F(ActivityDecoderTest, OtherKindsAreCountedAndSkipped) {
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  decoder_.Decode(reinterpret_cast<CUpti_Activity*>(&api));
  CUpti_ActivityKernel10 backwards{};
  backwards.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  backwards.start = 10;
  backwards.end = 5;  // clamped, never negative
  decoder_.Decode(reinterpret_cast<CUpti_Activity*>(&backwards));
  std::vector<RecordingSink::Emitted> out = sink_.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].record.dur_ns, 0);
  EXPECT_EQ(sink_.NameOf(out[0].record.name), "kernel");
  EXPECT_EQ(decoder_.skipped(), 1u);
}

}  // namespace
}  // namespace meridian
