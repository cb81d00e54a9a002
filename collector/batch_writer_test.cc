#include "collector/batch_writer.h"

#include <sqlite3.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

constexpr int64_t kT = 1700000000000000000;

std::string TempPath(const std::string& name) {
  std::string path = std::string(getenv("TEST_TMPDIR")) + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
  return path;
}

std::vector<v1::Batch> AgentBatches(int agent, int count) {
  BatchBuilder builder("agent-" + std::to_string(agent));
  int p = builder.DeclareProcess({"job", "host", agent, 0, agent});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  std::vector<v1::Batch> batches;
  for (int i = 0; i < count; ++i) {
    builder.AddSpan(t, v1::CATEGORY_MPI, "MPI_Barrier", kT + i * 100, 50);
    builder.AddSpan(t, v1::CATEGORY_USER, "step", kT + i * 100, 90);
    batches.push_back(builder.Take());
  }
  return batches;
}

// Waits for a number of completions without sleeping.
class Completions {
 public:
  void Done(absl::StatusOr<BatchWriteResult> result) {
    absl::MutexLock lock(&mu_);
    results_.push_back(std::move(result));
  }
  std::vector<absl::StatusOr<BatchWriteResult>> WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    target_ = n;
    mu_.Await(absl::Condition(this, &Completions::Reached));
    return results_;
  }

 private:
  bool Reached() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return results_.size() >= target_;
  }
  absl::Mutex mu_;
  std::vector<absl::StatusOr<BatchWriteResult>> results_ ABSL_GUARDED_BY(mu_);
  size_t target_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(BatchWriterTest, CommitsConcurrentSubmissionsExactlyOnce) {
  std::string path = TempPath("writer.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  Completions completions;
  {
    BatchWriter writer(std::move(*store));
    std::vector<std::thread> agents;
    for (int agent = 0; agent < 4; ++agent) {
      agents.emplace_back([&, agent] {
        for (int pass = 0; pass < 2; ++pass) {  // the second pass resends
          for (const v1::Batch& batch : AgentBatches(agent, 25)) {
            ASSERT_TRUE(writer
                            .Submit(std::make_shared<v1::Batch>(batch),
                                    [&](absl::StatusOr<BatchWriteResult> r) {
                                      completions.Done(std::move(r));
                                    })
                            .ok());
          }
        }
      });
    }
    for (std::thread& t : agents) t.join();
    auto results = completions.WaitFor(200);
    int stored = 0, duplicate = 0;
    for (const auto& r : results) {
      ASSERT_TRUE(r.ok()) << r.status();
      (r->duplicate ? duplicate : stored)++;
    }
    EXPECT_EQ(stored, 100);
    EXPECT_EQ(duplicate, 100);
  }
  auto reader = Store::Open(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->LoadCatalog("job")->job.spans, 4 * 25 * 2);
}

TEST(BatchWriterTest, ShutdownCommitsWhatWasSubmittedAndRefusesMore) {
  std::string path = TempPath("shutdown.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  Completions completions;
  BatchWriter writer(std::move(*store));
  for (const v1::Batch& batch : AgentBatches(0, 10)) {
    ASSERT_TRUE(writer
                    .Submit(std::make_shared<v1::Batch>(batch),
                            [&](absl::StatusOr<BatchWriteResult> r) {
                              completions.Done(std::move(r));
                            })
                    .ok());
  }
  writer.Shutdown();
  auto results = completions.WaitFor(10);
  for (const auto& r : results) EXPECT_TRUE(r.ok());
  ASSERT_TRUE(writer
                  .Submit(std::make_shared<v1::Batch>(AgentBatches(1, 1)[0]),
                          [&](absl::StatusOr<BatchWriteResult> r) {
                            completions.Done(std::move(r));
                          })
                  .ok());
  results = completions.WaitFor(11);
  EXPECT_EQ(results.back().status().code(), absl::StatusCode::kUnavailable);
  auto reader = Store::Open(path);
  EXPECT_EQ((*reader)->LoadCatalog("job")->job.spans, 20);
}

// Groups are bounded by spans, also when batches carry them in chunks:
// with a bound of one span, a batch the store fails (an injected fault)
// fails alone, however many batches are queued beside it.
TEST(BatchWriterTest, AGroupOfChunkedBatchesKeepsItsSpanBound) {
  std::string path = TempPath("group.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other,
                         "CREATE TRIGGER fault BEFORE INSERT ON chunks "
                         "WHEN NEW.max_end - NEW.first_start = 666 BEGIN "
                         "SELECT RAISE(ABORT, 'injected fault'); END;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  BatchBuilder builder("agent");
  int p = builder.DeclareProcess({"job", "host", 0, 0, 1});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  std::vector<v1::Batch> batches;
  for (int64_t dur : {10, 666, 20}) {
    builder.AddSpan(t, v1::CATEGORY_USER, "work", kT, dur);
    batches.push_back(ToChunks(builder.Take()));
    ASSERT_EQ(batches.back().spans_size(), 0);
  }
  Completions completions;
  std::vector<absl::StatusOr<BatchWriteResult>> results;
  {
    BatchWriter writer(std::move(*store), /*max_group_spans=*/1);
    // The other connection holds the write lock: every submission queues
    // before the writer can commit anything.
    ASSERT_EQ(
        sqlite3_exec(other, "BEGIN IMMEDIATE;", nullptr, nullptr, nullptr),
        SQLITE_OK);
    std::vector<int> order;
    absl::Mutex order_mu;
    for (size_t i = 0; i < batches.size(); ++i) {
      (void)writer.Submit(std::make_shared<v1::Batch>(batches[i]),
                          [&, i](absl::StatusOr<BatchWriteResult> r) {
                            {
                              absl::MutexLock lock(&order_mu);
                              order.push_back(static_cast<int>(i));
                            }
                            completions.Done(std::move(r));
                          });
    }
    ASSERT_EQ(sqlite3_exec(other, "COMMIT;", nullptr, nullptr, nullptr),
              SQLITE_OK);
    results = completions.WaitFor(3);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  }
  sqlite3_close(other);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok()) << results[0].status();
  EXPECT_EQ(results[1].status().message(),
            "storing a chunk failed in store " + path + ": injected fault");
  EXPECT_TRUE(results[2].ok()) << results[2].status();
  auto reader = Store::Open(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->LoadCatalog("job")->job.spans, 2);
}

// The queue is bounded in bytes: with the store locked by another
// connection nothing commits, so what was submitted stays counted; a batch
// beyond the bound is refused at once (RESOURCE_EXHAUSTED), and accepted
// again once the queue has drained.
TEST(BatchWriterTest, AFullQueueRefusesAndRecovers) {
  std::string path = TempPath("bounded.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  const std::vector<v1::Batch> batches = AgentBatches(0, 3);
  const size_t one = batches[0].ByteSizeLong();
  Completions completions;
  auto done = [&](absl::StatusOr<BatchWriteResult> r) {
    completions.Done(std::move(r));
  };
  {
    BatchWriter writer(std::move(*store), 200000, /*max_queue_bytes=*/one + 1);
    ASSERT_EQ(
        sqlite3_exec(other, "BEGIN IMMEDIATE;", nullptr, nullptr, nullptr),
        SQLITE_OK);
    ASSERT_TRUE(
        writer.Submit(std::make_shared<v1::Batch>(batches[0]), done).ok());
    EXPECT_EQ(writer.queued_bytes(), one);
    absl::Status full =
        writer.Submit(std::make_shared<v1::Batch>(batches[1]), done);
    EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(full.message(),
              absl::StrCat("the collector's write queue is full (", one,
                           " bytes waiting to be committed)"));
    ASSERT_EQ(sqlite3_exec(other, "COMMIT;", nullptr, nullptr, nullptr),
              SQLITE_OK);
    ASSERT_TRUE(completions.WaitFor(1)[0].ok());
    EXPECT_EQ(writer.queued_bytes(), 0u);
    ASSERT_TRUE(
        writer.Submit(std::make_shared<v1::Batch>(batches[1]), done).ok());
    EXPECT_TRUE(completions.WaitFor(2)[1].ok());
  }
  sqlite3_close(other);
  auto reader = Store::Open(path);
  EXPECT_EQ((*reader)->LoadCatalog("job")->job.spans, 4);  // 2 batches
}

}  // namespace
}  // namespace meridian
