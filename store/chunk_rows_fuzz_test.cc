// Runs the ClickHouse scan rows' fuzz target over its corpus and
// deterministic mutations of valid results (testing/fuzz_replay.h), and
// checks what a valid result and the broken ones give.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "store/chunk_merge.h"
#include "store/chunk_rows.h"
#include "store/row_binary.h"
#include "testing/fuzz_replay.h"
#include "wire/span_chunk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

// A scan result of two chunks of two tracks, one with string args.
std::string ValidResult() {
  RowBinaryWriter w;
  for (int chunk = 0; chunk < 2; ++chunk) {
    SpanColumns s;
    for (int i = 0; i < 5; ++i) {
      s.Add(1000 + chunk * 5 + i * 10, 3, i % 2, 0, 0);
      if (chunk == 1) s.AddArg({0, ChunkArg::Type::kString, 1, 0});
    }
    w.Int64(100 + chunk);  // id
    w.Int64(7 + chunk);    // track
    w.Int64(1000 + chunk * 5);
    w.ArraySize(2);
    w.Int64(41);
    w.Int64(42);
    w.ArraySize(chunk == 1 ? 2 : 0);
    if (chunk == 1) {
      w.String("key");
      w.String("value");
    }
    w.String(*EncodeSpanChunk(s));
  }
  return w.Take();
}

// The spans a result gives, or its error.
absl::StatusOr<std::vector<StoredSpan>> Merge(const std::string& result) {
  size_t at = 0;
  absl::string_view input(result);
  ChunkRowSource source({[&](size_t) -> absl::StatusOr<absl::string_view> {
                           return input.substr(at);
                         },
                         [&](size_t n) { at += n; }, [] { return true; }});
  std::vector<StoredSpan> spans;
  absl::Status status = MergeChunks(
      &source, {}, INT64_MIN, INT64_MAX,
      [&](const StoredSpan& s) {
        spans.push_back(s);
        return true;
      },
      nullptr);
  if (!status.ok()) return status;
  return spans;
}

TEST(ChunkRowsTest, AValidResultMergesAndBrokenOnesSayWhat) {
  auto spans = Merge(ValidResult());
  ASSERT_TRUE(spans.ok()) << spans.status();
  ASSERT_EQ(spans->size(), 10u);
  EXPECT_EQ((*spans)[0].start_ns, 1000);
  EXPECT_EQ((*spans)[1].start_ns, 1005);
  EXPECT_EQ((*spans)[1].track_id, 8);
  EXPECT_EQ((*spans)[1].op_id, 41);
  EXPECT_EQ((*spans)[3].op_id, 42);
  ASSERT_EQ((*spans)[1].args.size(), 1u);
  EXPECT_EQ((*spans)[1].args[0].key, "key");
  EXPECT_EQ((*spans)[1].args[0].str, "value");

  // Cut anywhere: DATA_LOSS, never a chunk made up.
  const std::string whole = ValidResult();
  auto cut = Merge(whole.substr(0, whole.size() - 3));
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StartsWith(cut.status().message(),
                               "ClickHouse's scan result broke off: "));
  // An error ClickHouse appended to the rows it had sent.
  auto error = Merge(whole + "Code: 241, e.displayText() = Memory limit");
  EXPECT_EQ(error.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(error.status().message().find("Code: 241"), std::string::npos);
}

TEST(ChunkRowsFuzzTest, CorpusAndMutationsNeverCrash) {
  const std::vector<std::string> seeds = {ValidResult()};
  WriteSeeds("chunk_rows", seeds);
  std::vector<std::string> inputs = seeds;
  for (std::string& input : FuzzCorpus("chunk_rows")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 3000), 3001u);
}

}  // namespace
}  // namespace meridian
