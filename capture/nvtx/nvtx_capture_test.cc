#include "capture/nvtx/nvtx_capture.h"

#include "gtest/gtest.h"
#include "testing/recording_sink.h"

namespace meridian {
namespace {

nvtxEventAttributes_t Attributes(const char* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

TEST(NvtxCaptureTest, PushPopNestOnTheThread) {
  RecordingSink sink;
  NvtxCapture nvtx(&sink);
  sink.now_ns = 100;
  EXPECT_EQ(nvtx.PushMessage("forward"), 1);
  sink.now_ns = 150;
  nvtxEventAttributes_t linear = Attributes("aten::linear");
  linear.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  linear.payload.llValue = -7;
  EXPECT_EQ(nvtx.Push(nullptr, &linear), 2);
  sink.now_ns = 400;
  EXPECT_EQ(nvtx.Pop(nullptr), 2);
  sink.now_ns = 1000;
  EXPECT_EQ(nvtx.Pop(nullptr), 1);
  EXPECT_EQ(nvtx.Pop(nullptr), -1);  // nothing open

  std::vector<RecordingSink::Emitted> out = sink.Take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(sink.NameOf(out[0].record.name), "aten::linear");
  EXPECT_EQ(out[0].record.category, 8);  // NVTX
  EXPECT_EQ(out[0].record.start_ns, 150);
  EXPECT_EQ(out[0].record.dur_ns, 250);
  EXPECT_EQ(sink.NameOf(out[0].record.args), "payload=-7");
  EXPECT_TRUE(out[0].stamp_step);
  EXPECT_EQ(sink.NameOf(out[1].record.name), "forward");
  EXPECT_EQ(out[1].record.start_ns, 100);
  EXPECT_EQ(out[1].record.dur_ns, 900);
  EXPECT_EQ(out[1].record.args, 0u);
}

TEST(NvtxCaptureTest, DomainsRegisteredStringsAndPayloads) {
  RecordingSink sink;
  NvtxCapture nvtx(&sink);
  nvtxDomainHandle_t nccl = nvtx.DomainCreate("NCCL");
  ASSERT_NE(nccl, nullptr);
  nvtxStringHandle_t name = nvtx.RegisterString(nccl, "ncclAllReduce");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = name;
  sink.now_ns = 10;
  nvtx.Push(nccl, &a);
  sink.now_ns = 30;
  nvtx.Pop(nccl);
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = 4096;
  nvtx.Mark(nccl, &a);
  nvtxEventAttributes_t wide{};
  wide.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  nvtx.Mark(nullptr, &wide);

  std::vector<RecordingSink::Emitted> out = sink.Take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(sink.NameOf(out[0].record.name), "ncclAllReduce");
  EXPECT_EQ(sink.NameOf(out[0].record.args), "domain=NCCL");
  EXPECT_EQ(out[0].record.dur_ns, 20);
  EXPECT_EQ(out[1].record.kind, 1);  // instant
  EXPECT_EQ(sink.NameOf(out[1].record.args), "domain=NCCL;payload=4096");
  EXPECT_EQ(sink.NameOf(out[2].record.name), "(wide string)");
}

TEST(NvtxCaptureTest, StartEndMayCrossThreadsAndUnknownIdsAreIgnored) {
  RecordingSink sink;
  NvtxCapture nvtx(&sink);
  sink.now_ns = 5;
  nvtxRangeId_t load = nvtx.StartMessage("data loading");
  ASSERT_NE(load, 0u);
  nvtxEventAttributes_t io = Attributes("io");
  nvtxRangeId_t other = nvtx.Start(nullptr, &io);
  sink.now_ns = 55;
  nvtx.End(nullptr, load);
  nvtx.End(nullptr, load);        // twice: once only
  nvtx.End(nullptr, 0);           // never started
  nvtx.End(nullptr, other + 99);  // never started
  std::vector<RecordingSink::Emitted> out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(sink.NameOf(out[0].record.name), "data loading");
  EXPECT_EQ(out[0].record.start_ns, 5);
  EXPECT_EQ(out[0].record.dur_ns, 50);
}

TEST(NvtxCaptureTest, NamedThreadsAndTheTracingWindow) {
  RecordingSink sink;
  NvtxCapture nvtx(&sink);
  nvtx.NameThread(4242, "dataloader");
  std::vector<RecordingSink::Emitted> out = sink.Take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(sink.NameOf(out[0].record.name), "thread name: dataloader");
  EXPECT_EQ(sink.NameOf(out[0].record.args), "tid=4242;name=dataloader");
  sink.recording = false;
  EXPECT_EQ(nvtx.PushMessage("outside"), 0);
  EXPECT_EQ(nvtx.Pop(nullptr), -1);
  EXPECT_EQ(nvtx.StartMessage("outside"), 0u);
  nvtx.MarkMessage("outside");
  EXPECT_TRUE(sink.Take().empty());
}

}  // namespace
}  // namespace meridian
