// A time window cut on the shown (corrected) timeline of a job whose
// nodes' clocks disagree, on both stores.
#include "query/clocks/shown_window.h"

#include <set>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/scenario_fixture.h"

namespace meridian {
namespace {

// A span as the test names it: rank's track, operation, shown start.
using Key = std::tuple<int64_t, int64_t, int64_t>;

// The spans that `range` returns and `keep` keeps.
std::set<Key> Read(const ScenarioFixture& f, const ScanRange& range,
                   const std::function<bool(const StoredSpan&)>& keep) {
  std::set<Key> read;
  EXPECT_TRUE(f.store
                  ->Scan(f.catalog.job, range,
                         [&](const StoredSpan& s) {
                           if (keep(s)) {
                             read.insert({s.track_id, s.op_id,
                                          f.clocks->Place(s).start_ns});
                           }
                           return true;
                         })
                  .ok());
  return read;
}

v1::SpanFilter Window(int64_t from_ns, int64_t to_ns) {
  v1::SpanFilter filter;
  filter.set_from_ns(from_ns);
  filter.set_to_ns(to_ns);
  return filter;
}

// slow-rank with node-1 (ranks 2, 3) 3 ms ahead: step 1 runs at [10,
// 15.1) ms on the shown timeline; on node-1's raw clock at [13, 18.1).
class ShownWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    f_ = ScenarioFixture::Load("slow-rank", 3 * kMs);
    ASSERT_NE(f_, nullptr);
  }
  // Every span whose shown interval meets [from, to) since the origin,
  // from a scan of the whole job.
  std::set<Key> Expected(int64_t from, int64_t to) {
    const int64_t origin = f_->clocks->epoch_ns();
    return Read(*f_, ScanRange{}, [&](const StoredSpan& s) {
      const JobClocks::Interval i = f_->clocks->Place(s);
      return i.start_ns + i.dur_ns - origin >= from && i.start_ns - origin < to;
    });
  }
  std::unique_ptr<ScenarioFixture> f_;
};

TEST_F(ShownWindowTest, SelectsTheSpansShownInTheWindowNotThoseStoredInIt) {
  const ShownWindow window(Window(12 * kMs, 14 * kMs), f_->catalog,
                           *f_->clocks);
  const ScanRange range = window.Widen(ScanRange{});
  // Node-0 needs raw [12, 14) ms, node-1 [15, 17) ms: both read.
  ASSERT_TRUE(range.from_ns && range.to_ns);
  EXPECT_LE(*range.from_ns, 12 * kMs);
  EXPECT_GE(*range.to_ns, 17 * kMs);
  const std::set<Key> got = Read(*f_, range, [&](const StoredSpan& s) {
    return window.Contains(f_->clocks->Place(s));
  });
  EXPECT_EQ(got, Expected(12 * kMs, 14 * kMs));
  // Step 1 of every rank: "step", "forward", its comm thread's Allreduce
  // (shown [11, 12) ms: ends at `from`, so in), and the main Allreduce of
  // ranks 0, 1, 3 (rank 2's starts at 15 ms).
  EXPECT_EQ(got.size(), 4u + 4u + 4u + 3u);

  // Cut on raw times as before, node-1's spans were 3 ms late: its comm
  // thread's Allreduces (raw [14, 15) ms) and rank 3's main one (raw [16,
  // 18.1) ms) were left out.
  ScanRange raw;
  raw.from_ns = 12 * kMs;
  raw.to_ns = 14 * kMs;
  const std::set<Key> raw_cut =
      Read(*f_, raw, [](const StoredSpan&) { return true; });
  EXPECT_EQ(raw_cut.size(), 4u + 4u + 2u + 2u);
  EXPECT_NE(raw_cut, got);
}

TEST_F(ShownWindowTest, EdgesAndOpenEndsFollowTheRawConvention) {
  const int64_t end = f_->catalog.job.max_end_ns - f_->catalog.job.min_start_ns;
  for (const auto& [from, to] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 1},
                                                {10 * kMs, 10 * kMs},
                                                {15 * kMs, 15 * kMs + 1},
                                                {5 * kMs + 100 * kUs, 13 * kMs},
                                                {-kMs, 0},
                                                {end, end + 10 * kMs}}) {
    SCOPED_TRACE(absl::StrCat("[", from, ", ", to, ")"));
    const ShownWindow window(Window(from, to), f_->catalog, *f_->clocks);
    EXPECT_EQ(Read(*f_, window.Widen(ScanRange{}),
                   [&](const StoredSpan& s) {
                     return window.Contains(f_->clocks->Place(s));
                   }),
              Expected(from, to));
  }
  // One end only; and far beyond the job (clamped, no overflow).
  v1::SpanFilter from_only;
  from_only.set_from_ns(13 * kMs);
  v1::SpanFilter to_only;
  to_only.set_to_ns(13 * kMs);
  v1::SpanFilter huge = Window(-9000000000000000000, 9000000000000000000);
  for (const v1::SpanFilter& filter : {from_only, to_only, huge}) {
    SCOPED_TRACE(filter.ShortDebugString());
    const ShownWindow window(filter, f_->catalog, *f_->clocks);
    const ScanRange range = window.Widen(ScanRange{});
    EXPECT_EQ(range.from_ns.has_value(), filter.has_from_ns());
    EXPECT_EQ(range.to_ns.has_value(), filter.has_to_ns());
    EXPECT_EQ(
        Read(*f_, range,
             [&](const StoredSpan& s) {
               return window.Contains(f_->clocks->Place(s));
             }),
        Expected(filter.has_from_ns() ? filter.from_ns() : -9000000000000000000,
                 filter.has_to_ns() ? filter.to_ns() : 9000000000000000000));
  }
  EXPECT_EQ(Expected(-9000000000000000000, 9000000000000000000).size(),
            static_cast<size_t>(f_->catalog.job.spans));
}

TEST(FirstRawAtOrAfterTest, IsTheEarliestRawTimeShownAtOrAfter) {
  auto f = ScenarioFixture::Load("slow-rank", 3 * kMs);
  ASSERT_NE(f, nullptr);
  for (const TrackInfo& t : f->catalog.tracks) {
    for (int64_t at : {f->clocks->epoch_ns(), f->clocks->epoch_ns() + 12345}) {
      const int64_t raw = f->clocks->FirstRawAtOrAfter(t.id, at);
      StoredSpan s;
      s.track_id = t.id;
      s.start_ns = raw;
      EXPECT_GE(f->clocks->Place(s).start_ns, at);
      s.start_ns = raw - 1;
      EXPECT_LT(f->clocks->Place(s).start_ns, at);
    }
  }
}

}  // namespace
}  // namespace meridian
