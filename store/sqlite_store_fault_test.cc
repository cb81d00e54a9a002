// The SQLite store's writes failing at every point (testing/faulty_vfs.h:
// each write, sync and truncate SQLite makes, in turn): a failed Write
// stores nothing of its batches and says so, the store goes on, the batch
// written again is stored once, and a reopened store holds every batch
// whose Write succeeded, each whole and once.
#include <stdlib.h>

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "store/store.h"
#include "testing/faulty_vfs.h"
#include "testing/synthetic_job.h"
#include "wire/batch_validator.h"

namespace meridian {
namespace {

absl::StatusOr<std::vector<BatchWriteResult>> WriteValid(Store& store,
                                                         v1::Batch batch) {
  std::vector<SpanColumns> decoded;
  BatchRepairs repairs;
  absl::Status valid = ValidateBatch(&batch, &decoded, &repairs);
  if (!valid.ok()) return valid;
  const v1::Batch* batches[] = {&batch};
  std::vector<SpanColumns>* columns[] = {&decoded};
  return store.Write(batches, columns);
}

TEST(SqliteStoreFaultTest,
     AWriteFailingAtAnyCallStoresNothingAndTheStoreGoesOn) {
  FaultyVfs& vfs = FaultyVfs::Install();
  char dir[] = "/tmp/meridian-store-fault-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/store.db";

  SyntheticJob job;
  job.job = "faulty";
  job.ranks = 2;
  job.nodes = 1;
  job.steps = 200;
  job.spans_per_batch = 40;
  const std::vector<v1::Batch> batches = SyntheticBatches(job, 0);
  int64_t spans = 0;
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    auto first = WriteValid(**store, batches[0]);
    ASSERT_TRUE(first.ok()) << first.status();
    spans += (*first)[0].spans_stored;
    // The calls a Write of the next batch makes (its pages to the WAL, the
    // commit's sync): each is failed in turn below, in a Write of the same
    // shape.
    const int64_t before = vfs.calls();
    auto second = WriteValid(**store, batches[1]);
    ASSERT_TRUE(second.ok()) << second.status();
    spans += (*second)[0].spans_stored;
    const int64_t per_write = vfs.calls() - before;
    ASSERT_GE(per_write, 2);
    EXPECT_EQ(vfs.kinds().back(), "sync");  // synchronous=FULL: the commit's
    size_t next = 2;
    int64_t failed = 0;
    for (int64_t k = 0; k < per_write && next < batches.size(); ++k) {
      const v1::Batch& batch = batches[next++];
      vfs.FailAt(vfs.calls() + k);
      auto written = WriteValid(**store, batch);
      vfs.FailAt(-1);
      if (written.ok()) {  // this Write made fewer calls than the first
        ASSERT_FALSE((*written)[0].duplicate);
        spans += (*written)[0].spans_stored;
        continue;
      }
      ++failed;
      EXPECT_NE(std::string(written.status().message()).find("disk I/O error"),
                std::string::npos)
          << "call " << k << ": " << written.status();
      // What an agent does: sends it again. Stored now, once: the failed
      // Write kept nothing of it.
      auto again = WriteValid(**store, batch);
      ASSERT_TRUE(again.ok()) << "call " << k << ": " << again.status();
      EXPECT_FALSE((*again)[0].duplicate) << "call " << k;
      spans += (*again)[0].spans_stored;
      // And once only.
      auto third = WriteValid(**store, batch);
      ASSERT_TRUE(third.ok());
      EXPECT_TRUE((*third)[0].duplicate);
    }
    EXPECT_EQ(failed, per_write);  // every call of a Write failed one
    for (; next < batches.size(); ++next) {
      auto written = WriteValid(**store, batches[next]);
      ASSERT_TRUE(written.ok()) << written.status();
      spans += (*written)[0].spans_stored;
    }
  }
  EXPECT_EQ(spans, job.ranks * (1 + kSyntheticSpansPerStep * job.steps));
  auto reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  auto jobs = (*reopened)->ListJobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].spans, spans);
  int64_t scanned = 0;
  ASSERT_TRUE((*reopened)
                  ->Scan((*jobs)[0], {},
                         [&scanned](const StoredSpan&) {
                           ++scanned;
                           return true;
                         })
                  .ok());
  EXPECT_EQ(scanned, spans);
  (void)!system((std::string("rm -rf ") + dir).c_str());
}

// A job's saved results (step summaries, clock solution) and its deletion,
// each failing at every call in turn: the call fails, and what was stored
// before is what the store reads; the next call succeeds.
TEST(SqliteStoreFaultTest,
     ResultsSavedAndJobsDeletedFailingAtAnyCallKeepWhatWasThere) {
  FaultyVfs& vfs = FaultyVfs::Install();
  char dir[] = "/tmp/meridian-store-fault-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto store = Store::Open(std::string(dir) + "/store.db");
  ASSERT_TRUE(store.ok()) << store.status();
  SyntheticJob job;
  job.job = "results";
  job.ranks = 2;
  job.nodes = 1;
  job.steps = 20;
  int64_t spans = 0;
  for (const v1::Batch& batch : SyntheticBatches(job, 0)) {
    auto written = WriteValid(**store, batch);
    ASSERT_TRUE(written.ok()) << written.status();
    spans += (*written)[0].spans_stored;
  }
  auto jobs = (*store)->ListJobs();
  ASSERT_TRUE(jobs.ok() && jobs->size() == 1u);
  const int64_t id = (*jobs)[0].id;
  const auto steps = [](const std::string& data) {
    return std::vector<StoredStepSummary>{{0, data}, {1, data}, {2, data}};
  };
  const auto state = [&](const std::string& data) {
    StoredJobResult r;
    r.spans = spans;
    r.data = data;
    return r;
  };
  const auto summaries_read = [&]() {
    std::string read;
    EXPECT_TRUE((*store)
                    ->ScanStepSummaries(id, 0,
                                        [&read](const StoredStepSummary& s) {
                                          read += s.data + ";";
                                          return true;
                                        })
                    .ok());
    auto saved = (*store)->LoadSummaryState(id);
    EXPECT_TRUE(saved.ok() && saved->has_value());
    return read + (saved.ok() && saved->has_value() ? (*saved)->data : "");
  };
  // Each operation once as it will be failed (its calls counted), what was
  // there before put back, then the operation failed at each of its calls
  // and what was there checked.
  const auto fail_each_call = [&](const std::function<absl::Status()>& op,
                                  const std::function<absl::Status()>& restore,
                                  const std::function<void(int64_t)>& check) {
    const int64_t before = vfs.calls();
    ASSERT_TRUE(op().ok());
    const int64_t calls = vfs.calls() - before;
    ASSERT_GE(calls, 1);
    ASSERT_TRUE(restore().ok());
    for (int64_t k = 0; k < calls; ++k) {
      vfs.FailAt(vfs.calls() + k);
      const absl::Status failed = op();
      vfs.FailAt(-1);
      EXPECT_FALSE(failed.ok()) << "call " << k;
      check(k);
    }
  };
  const auto save_summaries = [&](const std::string& steps_data,
                                  const std::string& state_data) {
    return [&, steps_data, state_data] {
      return (*store)->SaveStepSummaries(id, steps(steps_data),
                                         state(state_data));
    };
  };
  ASSERT_TRUE(save_summaries("a", "s1")().ok());
  fail_each_call(
      save_summaries("x", "sx"), save_summaries("a", "s1"),
      [&](int64_t k) { EXPECT_EQ(summaries_read(), "a;a;a;s1") << k; });
  ASSERT_TRUE((*store)->SaveStepSummaries(id, steps("b"), state("s2")).ok());
  EXPECT_EQ(summaries_read(), "b;b;b;s2");

  const auto save_clocks = [&](const std::string& data) {
    return [&, data] { return (*store)->SaveClockSolution(id, state(data)); };
  };
  ASSERT_TRUE(save_clocks("clock-1")().ok());
  fail_each_call(save_clocks("clock-x"), save_clocks("clock-1"),
                 [&](int64_t k) {
                   auto solution = (*store)->LoadClockSolution(id);
                   ASSERT_TRUE(solution.ok() && solution->has_value()) << k;
                   EXPECT_EQ((*solution)->data, "clock-1") << k;
                 });

  // A deletion: measured on a copy of the job, then failed on the job.
  job.job = "results-copy";
  for (const v1::Batch& batch : SyntheticBatches(job, 0)) {
    v1::Batch copy = batch;
    copy.set_agent_id(copy.agent_id() + "/copy");
    ASSERT_TRUE(WriteValid(**store, copy).ok());
  }
  const int64_t before = vfs.calls();
  ASSERT_TRUE((*store)->DeleteJob("results-copy").ok());
  const int64_t calls = vfs.calls() - before;
  for (int64_t k = 0; k < calls; ++k) {
    vfs.FailAt(vfs.calls() + k);
    auto deleted = (*store)->DeleteJob("results");
    vfs.FailAt(-1);
    EXPECT_FALSE(deleted.ok()) << "call " << k;
    auto listed = (*store)->ListJobs();
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u) << "call " << k;
    EXPECT_EQ((*listed)[0].spans, spans) << "call " << k;
    EXPECT_EQ(summaries_read(), "b;b;b;s2") << "call " << k;
  }
  auto deleted = (*store)->DeleteJob("results");
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  auto listed = (*store)->ListJobs();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
  (void)!system((std::string("rm -rf ") + dir).c_str());
}

}  // namespace
}  // namespace meridian
