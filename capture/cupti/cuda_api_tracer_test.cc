#include "capture/cupti/cuda_api_tracer.h"

#include "gtest/gtest.h"
#include "testing/recording_sink.h"

namespace meridian {
namespace {

using Domain = CudaApiTracer::Domain;

TEST(CudaApiTracerTest, TracesLaunchesCopiesAndSynchronizeOnly) {
  EXPECT_TRUE(CudaApiTracer::Traced(Domain::kRuntime, "cudaLaunchKernel"));
  EXPECT_TRUE(CudaApiTracer::Traced(Domain::kRuntime, "cudaLaunchKernelExC"));
  EXPECT_TRUE(CudaApiTracer::Traced(Domain::kRuntime, "cudaGraphLaunch"));
  EXPECT_TRUE(CudaApiTracer::Traced(Domain::kRuntime, "cudaMemcpyAsync"));
  EXPECT_TRUE(CudaApiTracer::Traced(Domain::kRuntime, "cudaMemsetAsync"));
  EXPECT_TRUE(CudaApiTracer::Traced(Domain::kRuntime, "cudaStreamSynchronize"));
  EXPECT_TRUE(CudaApiTracer::Traced(Domain::kRuntime, "cudaDeviceSynchronize"));
  EXPECT_FALSE(CudaApiTracer::Traced(Domain::kRuntime, "cudaGetDevice"));
  EXPECT_FALSE(CudaApiTracer::Traced(Domain::kRuntime, "cudaStreamWaitEvent"));
  EXPECT_FALSE(CudaApiTracer::Traced(Domain::kRuntime, nullptr));
  EXPECT_TRUE(CudaApiTracer::Traced(Domain::kDriver, "cuLaunchKernel"));
  EXPECT_TRUE(CudaApiTracer::Traced(Domain::kDriver, "cuLaunchKernelEx"));
  EXPECT_FALSE(CudaApiTracer::Traced(Domain::kDriver, "cuMemcpyHtoD_v2"));
  EXPECT_FALSE(CudaApiTracer::Traced(Domain::kDriver, "cuCtxGetCurrent"));
}

TEST(CudaApiTracerTest, RecordsEachCallOnItsThreadWithItsCorrelation) {
  RecordingSink sink;
  CudaApiTracer tracer(&sink);
  sink.set_step(5);
  sink.now_ns = 100;
  tracer.Enter(Domain::kRuntime, 211);
  // The runtime launch makes a driver launch: not recorded twice.
  tracer.Enter(Domain::kDriver, 307);
  tracer.Exit(Domain::kDriver, 307, "cuLaunchKernel", 40);
  sink.now_ns = 130;
  tracer.Exit(Domain::kRuntime, 211, "cudaLaunchKernel", 41);
  sink.set_step(-1);
  sink.now_ns = 200;
  tracer.Enter(Domain::kRuntime, 131);
  sink.now_ns = 900;
  tracer.Exit(Domain::kRuntime, 131, "cudaStreamSynchronize", 42);
  // A driver launch of its own (Triton, cuBLASLt) is recorded.
  tracer.Enter(Domain::kDriver, 307);
  sink.now_ns = 950;
  tracer.Exit(Domain::kDriver, 307, "cuLaunchKernel", 43);

  std::vector<RecordingSink::Emitted> out = sink.Take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(sink.NameOf(out[0].record.name), "cudaLaunchKernel");
  EXPECT_EQ(out[0].record.category, 7);  // CUDA_RUNTIME
  EXPECT_EQ(out[0].record.start_ns, 100);
  EXPECT_EQ(out[0].record.dur_ns, 30);
  EXPECT_EQ(out[0].record.correlation, 41u);
  EXPECT_EQ(out[0].record.flags, ProbeRecord::kHasStep);
  EXPECT_EQ(out[0].record.step, 5);
  EXPECT_EQ(sink.NameOf(out[1].record.name), "cudaStreamSynchronize");
  EXPECT_EQ(out[1].record.category, 6);  // CUDA_SYNC
  EXPECT_EQ(out[1].record.dur_ns, 700);
  EXPECT_EQ(out[1].record.flags, 0);
  EXPECT_EQ(sink.NameOf(out[2].record.name), "cuLaunchKernel");
  EXPECT_EQ(out[2].record.correlation, 43u);

  int64_t step = -1;
  EXPECT_TRUE(tracer.StepOf(41, &step));
  EXPECT_EQ(step, 5);
  EXPECT_FALSE(tracer.StepOf(42, &step));  // no step was current
  EXPECT_FALSE(tracer.StepOf(41 + CudaApiTracer::kStepSlots, &step));
}

TEST(CudaApiTracerTest, IgnoresExitsWithoutEntriesAndOutsideTheWindow) {
  RecordingSink sink;
  CudaApiTracer tracer(&sink);
  tracer.Exit(Domain::kRuntime, 211, "cudaLaunchKernel", 1);  // entered early
  sink.recording = false;
  tracer.Enter(Domain::kRuntime, 211);
  tracer.Exit(Domain::kRuntime, 211, "cudaLaunchKernel", 2);
  tracer.Enter(Domain::kRuntime, CudaApiTracer::kMaxCallbackIds);
  tracer.Exit(Domain::kRuntime, CudaApiTracer::kMaxCallbackIds, "x", 3);
  EXPECT_TRUE(sink.Take().empty());
}

}  // namespace
}  // namespace meridian
