#include "wire/batch_spans.h"

#include "gtest/gtest.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

TEST(BatchSpansTest, SpansByJobCountsMessagesAndChunksUnderTheirJob) {
  BatchBuilder builder("agent");
  const int a =
      builder.DeclareTrack(builder.DeclareProcess({"job-a", "node", 0, 0, 1}),
                           v1::TRACK_KIND_THREAD, 1, "main");
  const int b =
      builder.DeclareTrack(builder.DeclareProcess({"job-b", "node", 0, 0, 2}),
                           v1::TRACK_KIND_THREAD, 1, "main");
  const int a2 =
      builder.DeclareTrack(builder.DeclareProcess({"job-a", "node", 1, 1, 3}),
                           v1::TRACK_KIND_THREAD, 1, "main");
  for (int i = 0; i < 3; ++i) builder.AddSpan(a, v1::CATEGORY_USER, "x", i, 1);
  builder.AddSpan(b, v1::CATEGORY_USER, "x", 5, 1);
  builder.AddSpan(a2, v1::CATEGORY_USER, "x", 6, 1);
  v1::Batch batch = builder.Take();
  // A chunk of 7 spans of job-b, and one naming no track.
  v1::SpanChunk* chunk = batch.add_chunks();
  chunk->set_track(static_cast<uint32_t>(b));
  chunk->set_count(7);
  batch.add_chunks()->set_count(2);
  batch.mutable_chunks(1)->set_track(99);
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"job-a", 4}, {"job-b", 8}, {"", 2}};
  EXPECT_EQ(SpansByJob(batch), want);
  EXPECT_EQ(SpanCount(batch), 14);
  EXPECT_TRUE(SpansByJob(v1::Batch()).empty());
}

}  // namespace
}  // namespace meridian
