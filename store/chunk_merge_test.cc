// MergeChunks against a plain sort of every span: chunks of many tracks
// that overlap in time, equal starts within and across chunks, a range that
// cuts chunks, a visitor that stops early, and a chunk that names an
// operation it lacks.
#include "store/chunk_merge.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// Chunks held in memory, handed out ascending by (first start, id).
class MemorySource : public ChunkSource {
 public:
  explicit MemorySource(std::vector<MergeChunk> chunks)
      : chunks_(std::move(chunks)) {
    std::sort(chunks_.begin(), chunks_.end(),
              [](const MergeChunk& a, const MergeChunk& b) {
                return std::make_pair(a.spans.start_ns[0], a.id) <
                       std::make_pair(b.spans.start_ns[0], b.id);
              });
  }
  absl::StatusOr<std::optional<int64_t>> PeekFirstStart() override {
    if (next_ == chunks_.size()) return std::optional<int64_t>();
    return std::optional<int64_t>(chunks_[next_].spans.start_ns[0]);
  }
  absl::StatusOr<bool> Take(MergeChunk* out) override {
    *out = chunks_[next_++];
    return true;
  }
  absl::StatusOr<std::string> LookupString(int64_t id) override {
    return "s" + std::to_string(id);
  }

 private:
  std::vector<MergeChunk> chunks_;
  size_t next_ = 0;
};

// A span as the test identifies it: (start, track, chunk id, index), which
// is also the order MergeChunks promises.
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;

// `tracks` tracks of `per_chunk` spans a chunk, `chunks` chunks each, all
// overlapping: starts on a coarse grid so that many are equal. A span's
// `value` holds its chunk id and `bytes` its index, so the output names it.
std::vector<MergeChunk> Chunks(int tracks, int chunks, int per_chunk,
                               uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<MergeChunk> out;
  int64_t id = 1;
  for (int t = 0; t < tracks; ++t) {
    for (int c = 0; c < chunks; ++c) {
      MergeChunk chunk;
      chunk.id = id++;
      chunk.track = 100 + (t * 7919) % tracks;  // ids not in taking order
      std::vector<int64_t> starts;
      for (int i = 0; i < per_chunk; ++i) {
        starts.push_back(static_cast<int64_t>(random() % 2000) * 1000);
      }
      std::sort(starts.begin(), starts.end());
      for (int i = 0; i < per_chunk; ++i) {
        const size_t at = chunk.spans.Add(starts[i], 500, 3, 0, 0);
        chunk.spans.bytes[at] = i;
        chunk.spans.value[at] = static_cast<double>(chunk.id);
        chunk.spans.flags[at] = SpanColumns::kHasStep;
        chunk.spans.step[at] = starts[i] / 100000;
      }
      out.push_back(std::move(chunk));
    }
  }
  return out;
}

// What a merge gives, as keys.
std::vector<Key> Merged(std::vector<MergeChunk> chunks, const ScanRange& range,
                        int64_t end_lo, int64_t hi, size_t stop_after = 0) {
  MemorySource source(std::move(chunks));
  std::vector<Key> got;
  absl::Status status = MergeChunks(
      &source, range, end_lo, hi,
      [&](const StoredSpan& s) {
        got.emplace_back(s.start_ns, s.track_id, static_cast<int64_t>(s.value),
                         s.bytes);
        return stop_after == 0 || got.size() < stop_after;
      },
      nullptr);
  EXPECT_TRUE(status.ok()) << status;
  return got;
}

// What a merge must give: every wanted span, sorted.
std::vector<Key> Expected(const std::vector<MergeChunk>& chunks, int64_t end_lo,
                          int64_t hi, int64_t first_step, int64_t last_step) {
  std::vector<Key> want;
  for (const MergeChunk& c : chunks) {
    for (size_t i = 0; i < c.spans.size(); ++i) {
      const SpanColumns& s = c.spans;
      if (s.start_ns[i] < hi && s.start_ns[i] + s.dur_ns[i] >= end_lo &&
          s.step[i] >= first_step && s.step[i] <= last_step) {
        want.emplace_back(s.start_ns[i], c.track, c.id,
                          static_cast<int64_t>(i));
      }
    }
  }
  std::sort(want.begin(), want.end());
  return want;
}

TEST(ChunkMergeTest, ManyOverlappingTracksLeaveInStartTrackChunkOrder) {
  // 600 tracks of 3 chunks of 60 spans: 108,000 spans over 2,000 distinct
  // starts, so batches hold many equal starts of many chunks.
  const std::vector<MergeChunk> chunks = Chunks(600, 3, 60, 1);
  const std::vector<Key> got = Merged(chunks, {}, INT64_MIN, INT64_MAX);
  EXPECT_EQ(got.size(), 108000u);
  EXPECT_EQ(got, Expected(chunks, INT64_MIN, INT64_MAX, INT64_MIN, INT64_MAX));
}

TEST(ChunkMergeTest, FewSpansAndManyChunksInTurn) {
  // Chunks of one span each, one track after another: every batch is cut
  // by the next chunk.
  const std::vector<MergeChunk> chunks = Chunks(50, 40, 1, 2);
  EXPECT_EQ(Merged(chunks, {}, INT64_MIN, INT64_MAX),
            Expected(chunks, INT64_MIN, INT64_MAX, INT64_MIN, INT64_MAX));
}

TEST(ChunkMergeTest, ARangeOfTimeAndStepsKeepsOnlyItsSpans) {
  const std::vector<MergeChunk> chunks = Chunks(40, 2, 200, 3);
  ScanRange range;
  range.first_step = 4;
  range.last_step = 12;
  // Spans ending at or after 300,000 and starting before 1,500,000.
  const std::vector<Key> got = Merged(chunks, range, 300000, 1500000);
  const std::vector<Key> want = Expected(chunks, 300000, 1500000, 4, 12);
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);
}

TEST(ChunkMergeTest, AVisitorThatStopsGetsTheFirstSpansOnly) {
  const std::vector<MergeChunk> chunks = Chunks(100, 2, 100, 4);
  std::vector<Key> want =
      Expected(chunks, INT64_MIN, INT64_MAX, INT64_MIN, INT64_MAX);
  want.resize(777);
  EXPECT_EQ(Merged(chunks, {}, INT64_MIN, INT64_MAX, 777), want);
}

TEST(ChunkMergeTest, TimesAtTheEdgesOfTheClockDoNotOverflow) {
  std::vector<MergeChunk> chunks(2);
  for (int c = 0; c < 2; ++c) {
    chunks[c].id = c + 1;
    chunks[c].track = 5;
    chunks[c].spans.Add(INT64_MAX - 10 + c, 0, 3, 0, 0);
    chunks[c].spans.Add(INT64_MAX - 1, 0, 3, 0, 0);
    for (size_t i = 0; i < 2; ++i) {
      chunks[c].spans.bytes[i] = static_cast<int64_t>(i);
      chunks[c].spans.value[i] = c + 1;
    }
  }
  const std::vector<Key> got = Merged(chunks, {}, INT64_MIN, INT64_MAX);
  const std::vector<Key> want = {{INT64_MAX - 10, 5, 1, 0},
                                 {INT64_MAX - 9, 5, 2, 0},
                                 {INT64_MAX - 1, 5, 1, 1},
                                 {INT64_MAX - 1, 5, 2, 1}};
  EXPECT_EQ(got, want);
}

TEST(ChunkMergeTest, EachSpanGetsItsOwnArgsFromItsChunksStrings) {
  // Chunk 1 names strings by the store's ids (LookupString: "s<id>"),
  // chunk 2 by its own table; spans without args between spans with them.
  std::vector<MergeChunk> chunks(2);
  for (int c = 0; c < 2; ++c) {
    chunks[c].id = c + 1;
    chunks[c].track = 9 - c;
    for (int i = 0; i < 4; ++i) {
      chunks[c].spans.Add(100 * i + c, 10, 3, 0, 0);
      for (int a = 0; a < i % 3; ++a) {
        chunks[c].spans.AddArg(
            {static_cast<uint32_t>(a),
             a == 0 ? ChunkArg::Type::kString : ChunkArg::Type::kInt,
             a == 0 ? 1 : 40 + i, 0});
      }
    }
  }
  chunks[1].strings = {"key", "value"};
  MemorySource source(std::move(chunks));
  std::vector<std::string> got;
  absl::Status status = MergeChunks(
      &source, {}, INT64_MIN, INT64_MAX,
      [&](const StoredSpan& s) {
        std::string line = std::to_string(s.start_ns) + ":";
        for (const StoredArg& a : s.args) {
          line += " " + a.key + "=" +
                  (a.type == StoredArg::Type::kString
                       ? a.str
                       : std::to_string(a.int_value));
        }
        got.push_back(line);
        return true;
      },
      nullptr);
  ASSERT_TRUE(status.ok()) << status;
  const std::vector<std::string> want = {"0:",
                                         "1:",
                                         "100: s0=s1",
                                         "101: key=value",
                                         "200: s0=s1 s1=42",
                                         "201: key=value value=42",
                                         "300:",
                                         "301:"};
  EXPECT_EQ(got, want);
}

TEST(ChunkMergeTest, AChunkNamingAnOperationItLacksIsDataLoss) {
  std::vector<MergeChunk> chunks = Chunks(2, 1, 3, 5);
  chunks[1].op_ids = {41};  // its spans name operation 3
  MemorySource source(std::move(chunks));
  absl::Status status = MergeChunks(
      &source, {}, INT64_MIN, INT64_MAX, [](const StoredSpan&) { return true; },
      nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "chunk 2 names an operation it lacks");
}

}  // namespace
}  // namespace meridian
