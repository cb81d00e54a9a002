// The SQLite store's writes failing at every point (testing/faulty_vfs.h:
// each write, sync and truncate SQLite makes, in turn): a failed Write
// stores nothing of its batches and says so, the store goes on, the batch
// written again is stored once, and a reopened store holds every batch
// whose Write succeeded, each whole and once.
#include <stdlib.h>

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

}  // namespace
}  // namespace meridian
