#include "import/time_base.h"

#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "wire/span_rules.h"

namespace meridian {
namespace {

constexpr int64_t kEpoch = 1764000000000000000;  // 2025-11-24 16:00:00 UTC

TEST(TimeBaseTest, ChoosesByTheRulesInOrder) {
  // 1. The file's epoch, over everything.
  TimeBase b = ChooseTimeBase(kEpoch, 7, 9, 0, 100);
  EXPECT_EQ(b.offset_ns, kEpoch);
  EXPECT_EQ(b.note, "");
  // 2. Absolute already.
  b = ChooseTimeBase(std::nullopt, 7, 9, kEpoch, kEpoch + 1);
  EXPECT_EQ(b.offset_ns, 0);
  // 3. The option's epoch.
  b = ChooseTimeBase(std::nullopt, 7, 9, 0, 100);
  EXPECT_EQ(b.offset_ns, 7);
  EXPECT_EQ(b.note, "");
  // 4. The latest end at the fallback, said.
  b = ChooseTimeBase(std::nullopt, std::nullopt, kEpoch, 50, 100);
  EXPECT_EQ(b.offset_ns, kEpoch - 100);
  EXPECT_TRUE(absl::StrContains(b.note, "modification time")) << b.note;
  // 5. Nothing to go by.
  b = ChooseTimeBase(std::nullopt, std::nullopt, 0, 50, 100);
  EXPECT_EQ(b.offset_ns, 0);
  EXPECT_EQ(b.note, "");
  // No spans: nothing to place.
  b = ChooseTimeBase(std::nullopt, 7, 9, INT64_MAX, INT64_MIN);
  EXPECT_EQ(b.offset_ns, 0);
  // A fallback far before the trace's end does not overflow.
  b = ChooseTimeBase(std::nullopt, std::nullopt, 1, 0, INT64_MAX);
  EXPECT_EQ(b.offset_ns, 1 - INT64_MAX);
}

TEST(TimeBaseTest, PlacesSpansWithinTheRules) {
  ImportedSpan s;
  s.start_ns = 5;
  s.dur_ns = 10;
  EXPECT_EQ(PlaceSpan(kEpoch, &s), "");
  EXPECT_EQ(s.start_ns, kEpoch + 5);

  ImportedSpan early;
  early.start_ns = 5;
  EXPECT_EQ(PlaceSpan(0, &early),
            "field \"ts\": 5 ns + epoch 0 ns is not a time between 2000 and "
            "2100 (an absurd timestamp, or a relative trace: --epoch-ns)");
  EXPECT_EQ(early.start_ns, 5);
  ImportedSpan huge;
  huge.start_ns = INT64_MAX;
  EXPECT_NE(PlaceSpan(INT64_MAX, &huge), "");
  ImportedSpan longer;
  longer.start_ns = kEpoch;
  longer.dur_ns = kMaxDurationNs + 1;
  EXPECT_TRUE(absl::StrContains(PlaceSpan(0, &longer), "field \"dur\""));
  ImportedSpan late;
  late.start_ns = kMaxTimestampNs - 1;
  late.dur_ns = 2;
  EXPECT_EQ(PlaceSpan(0, &late), "field \"dur\": the span ends after 2100");
}

TEST(TimeBaseTest, PlacesEverySpanOrNamesTheFirstThatDoesNotFit) {
  std::vector<ImportedSpan> spans(3);
  spans[0].start_ns = 10;
  spans[1].start_ns = 20;
  spans[1].dur_ns = 5;
  spans[2].start_ns = 0;
  std::vector<std::string> notes;
  auto fail = [](size_t i, const std::string& problem) {
    return absl::InvalidArgumentError(absl::StrCat(i, ": ", problem));
  };
  ASSERT_TRUE(
      PlaceSpans(std::nullopt, std::nullopt, kEpoch, &spans, &notes, fail)
          .ok());
  EXPECT_EQ(spans[1].start_ns + spans[1].dur_ns, kEpoch);
  EXPECT_EQ(spans[2].start_ns, kEpoch - 25);
  EXPECT_EQ(notes.size(), 1u);

  std::vector<ImportedSpan> relative(2);
  relative[1].start_ns = 3;
  notes.clear();
  const absl::Status status =
      PlaceSpans(std::nullopt, std::nullopt, 0, &relative, &notes, fail);
  EXPECT_TRUE(absl::StartsWith(status.message(), "0: field \"ts\": 0 ns"))
      << status;
  EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace meridian
