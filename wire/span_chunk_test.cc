#include "wire/span_chunk.h"

#include <limits>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// The header's worked example, plus an arg of each type and a counter.
SpanColumns Example() {
  SpanColumns s;
  s.Add(1500, 0, 7, 2, 1);
  s.flags.back() = SpanColumns::kHasStep;
  s.step.back() = 3;
  s.AddArg({11, ChunkArg::Type::kInt, -5, 0});
  s.AddArg({12, ChunkArg::Type::kString, 13, 0});
  s.Add(1000, 400, 7, 2, 0);  // out of order: sorted first
  s.Add(1500, 20, 9, 2, 0);
  s.flags.back() =
      SpanColumns::kHasStep | SpanColumns::kHasPeer | SpanColumns::kHasSeq;
  s.step.back() = 3;
  s.peer.back() = -1;
  s.seq.back() = std::numeric_limits<uint64_t>::max();
  s.comm.back() = 0xfedcba9876543210ULL;
  s.comm_size.back() = 4;
  s.bytes.back() = 8;
  s.correlation.back() = 77;
  s.value.back() = 2.5;
  s.record.back() = 1234567;
  s.AddArg({14, ChunkArg::Type::kReal, 0, 0.125});
  return s;
}

TEST(SpanChunkTest, RoundTripsEveryColumnInStartOrder) {
  auto chunk = EncodeSpanChunk(Example());
  ASSERT_TRUE(chunk.ok()) << chunk.status();
  SpanColumns out;
  ASSERT_TRUE(DecodeSpanChunk(*chunk, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.start_ns, (std::vector<int64_t>{1000, 1500, 1500}));
  EXPECT_EQ(out.dur_ns, (std::vector<int64_t>{400, 0, 20}));
  EXPECT_EQ(out.name, (std::vector<uint32_t>{7, 7, 9}));
  EXPECT_EQ(out.category, (std::vector<uint32_t>{2, 2, 2}));
  EXPECT_EQ(out.kind, (std::vector<uint32_t>{0, 1, 0}));
  EXPECT_EQ(out.flags[0], 0);
  EXPECT_EQ(out.flags[1], SpanColumns::kHasStep);
  EXPECT_EQ(out.step, (std::vector<int64_t>{0, 3, 3}));
  EXPECT_EQ(out.peer[2], -1);
  EXPECT_EQ(out.seq[2], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(out.comm[2], 0xfedcba9876543210ULL);
  EXPECT_EQ(out.comm_size, (std::vector<uint32_t>{0, 0, 4}));
  EXPECT_EQ(out.bytes, (std::vector<int64_t>{0, 0, 8}));
  EXPECT_EQ(out.correlation[2], 77u);
  EXPECT_EQ(out.value, (std::vector<double>{0, 0, 2.5}));
  EXPECT_EQ(out.record, (std::vector<uint64_t>{0, 0, 1234567}));
  EXPECT_EQ(out.arg_end, (std::vector<uint32_t>{0, 2, 3}));
  ASSERT_EQ(out.args.size(), 3u);
  EXPECT_EQ(out.args[0].key, 11u);
  EXPECT_EQ(out.args[0].value, -5);
  EXPECT_EQ(out.args[1].type, ChunkArg::Type::kString);
  EXPECT_EQ(out.args[1].value, 13);
  EXPECT_EQ(out.args[2].type, ChunkArg::Type::kReal);
  EXPECT_EQ(out.args[2].real, 0.125);
}

TEST(SpanChunkTest, ExtremeValuesRoundTrip) {
  SpanColumns s;
  s.Add(std::numeric_limits<int64_t>::min(), -1, UINT32_MAX, 0, 0);
  s.Add(std::numeric_limits<int64_t>::max(),
        std::numeric_limits<int64_t>::max(), 0, UINT32_MAX, 0);
  s.bytes.back() = std::numeric_limits<int64_t>::min();
  s.flags.back() = SpanColumns::kHasTag | SpanColumns::kHasPartition;
  s.tag.back() = std::numeric_limits<int32_t>::min();
  s.partition.back() = std::numeric_limits<int32_t>::max();
  auto chunk = EncodeSpanChunk(s);
  ASSERT_TRUE(chunk.ok());
  SpanColumns out;
  ASSERT_TRUE(DecodeSpanChunk(*chunk, &out).ok());
  EXPECT_EQ(out.start_ns, s.start_ns);
  EXPECT_EQ(out.dur_ns, s.dur_ns);
  EXPECT_EQ(out.name, s.name);
  EXPECT_EQ(out.category, s.category);
  EXPECT_EQ(out.bytes, s.bytes);
  EXPECT_EQ(out.tag, s.tag);
  EXPECT_EQ(out.partition, s.partition);
}

TEST(SpanChunkTest, RepeatingSpansCostAFewBytesEach) {
  SpanColumns s;
  for (int i = 0; i < 4096; ++i) {
    s.Add(1'700'000'000'000'000'000 + i * 10'000 + (i % 7), 3'000 + (i % 5), 7,
          2, 0);
    s.flags.back() = SpanColumns::kHasSeq | SpanColumns::kHasStep;
    s.seq.back() = i;
    s.step.back() = i / 64;
    s.comm.back() = 0x1234567890abcdefULL;
    s.comm_size.back() = 16;
    s.bytes.back() = 8;
  }
  auto chunk = EncodeSpanChunk(s);
  ASSERT_TRUE(chunk.ok());
  EXPECT_LT(chunk->size(), 4096u * 2);
}

// An optional field that is present with the value 0 (step 0, peer 0) is
// not the same as an absent one.
TEST(SpanChunkTest, PresentZeroesAreKept) {
  SpanColumns s;
  s.Add(5, 1, 1, 1, 0);
  s.flags.back() = SpanColumns::kHasStep | SpanColumns::kHasPeer;
  s.Add(6, 1, 1, 1, 0);
  auto chunk = EncodeSpanChunk(s);
  ASSERT_TRUE(chunk.ok());
  SpanColumns out;
  ASSERT_TRUE(DecodeSpanChunk(*chunk, &out).ok());
  EXPECT_EQ(out.flags[0], SpanColumns::kHasStep | SpanColumns::kHasPeer);
  EXPECT_EQ(out.step[0], 0);
  EXPECT_EQ(out.flags[1], 0);
}

TEST(SpanChunkTest, EncodeRejectsEmptyAndUnequalColumns) {
  SpanColumns s;
  EXPECT_EQ(EncodeSpanChunk(s).status().message(),
            "span chunk: holds 0 spans; 1 to 65536 are allowed");
  s.Add(1, 1, 1, 1, 1);
  s.peer.push_back(3);
  EXPECT_EQ(EncodeSpanChunk(s).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SpanChunkTest, DecodeNamesWhatIsWrong) {
  SpanColumns out;
  EXPECT_EQ(DecodeSpanChunk("", &out).message(), "span chunk: empty");
  EXPECT_EQ(DecodeSpanChunk("\x07xyz", &out).message(),
            "span chunk: unknown format 7");
  EXPECT_EQ(DecodeSpanChunk(std::string("\x01garbage", 8), &out).message(),
            "span chunk: not a zstd frame with a known size");
  auto chunk = EncodeSpanChunk(Example());
  ASSERT_TRUE(chunk.ok());
  // Truncated frame.
  EXPECT_FALSE(DecodeSpanChunk(chunk->substr(0, chunk->size() - 3), &out).ok());
}

}  // namespace
}  // namespace meridian
