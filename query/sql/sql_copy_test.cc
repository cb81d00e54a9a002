// RunSqlOnCopy (`meridian sql` over a ClickHouse store) with the stores
// sql_test_store writes as its source: the same answers as RunSql over the
// store itself, one job copied, its bounds, and no copy left behind.
#include "query/sql/sql_copy.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/runfile.h"

namespace meridian {
namespace {

class SqlCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string tmp =
        getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp";
    path_ = tmp + "/sql_copy.db";
    copies_ = tmp + "/copies";
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
    std::filesystem::remove_all(copies_);
    std::filesystem::create_directory(copies_);
    const std::string command =
        Runfile("query/sql/sql_test_store") + " '" + path_ + "'";
    ASSERT_EQ(system(command.c_str()), 0);
  }

  static v1::SqlRequest Request(const std::string& query,
                                const std::string& job) {
    v1::SqlRequest request;
    request.set_query(query);
    request.set_job(job);
    return request;
  }

  absl::StatusOr<v1::SqlReply> OnCopy(const std::string& query,
                                      const std::string& job) {
    auto from = Store::Open(path_);
    if (!from.ok()) return from.status();
    return RunSqlOnCopy(**from, copies_, Request(query, job), limits_,
                        may_read_);
  }

  // Nothing is left of any copy.
  bool CopiesGone() const {
    return std::filesystem::is_empty(std::filesystem::path(copies_));
  }

  std::string path_, copies_;
  SqlLimits limits_;
  std::function<bool(const std::string&)> may_read_;
};

TEST_F(SqlCopyTest, AnswersAsOverTheStoreItself) {
  // Spans with their corrected times, steps, the catalog's tables and the
  // counters view: byte for byte RunSql's answers over the store.
  for (const char* query : {
           "SELECT rank, node, track, name, start_ns, raw_start_ns, dur_ns, "
           "end_ns, bytes, peer, tag, comm, seq, step, args FROM spans ORDER "
           "BY rank, raw_start_ns, name",
           "SELECT rank, count(*), sum(bytes) FROM spans WHERE name = "
           "'MPI_Allreduce' GROUP BY rank",
           "SELECT * FROM steps ORDER BY step, rank",
           "SELECT job, ranks, nodes, spans, world_size, raw_start_ns FROM "
           "jobs",
           "SELECT * FROM processes ORDER BY rank",
           "SELECT job, rank, node, pid, kind, id, track FROM tracks",
           "SELECT * FROM counters",
       }) {
    auto copied = OnCopy(query, "train");
    ASSERT_TRUE(copied.ok()) << query << ": " << copied.status();
    auto direct = RunSql(path_, Request(query, "train"), limits_, may_read_);
    ASSERT_TRUE(direct.ok()) << query << ": " << direct.status();
    EXPECT_GT(direct->rows_size(), 0) << query;
    EXPECT_EQ(copied->SerializeAsString(), direct->SerializeAsString())
        << query << "\ncopy:\n"
        << copied->DebugString() << "\nstore:\n"
        << direct->DebugString();
    EXPECT_TRUE(CopiesGone());
  }
  // Only the job named was copied.
  auto jobs = OnCopy(
      "SELECT job FROM jobs UNION ALL SELECT DISTINCT job "
      "FROM spans",
      "train");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->rows_size(), 2);
  EXPECT_EQ(jobs->rows(0).values(0).text(), "train");
  EXPECT_EQ(jobs->rows(1).values(0).text(), "train");
}

TEST_F(SqlCopyTest, OneJobOnlyAndOnlyOneItMayRead) {
  EXPECT_EQ(OnCopy("SELECT 1", "").status(),
            absl::InvalidArgumentError(
                "meridian sql over this collector's store (ClickHouse) reads "
                "one job: name it (--job J)"));
  may_read_ = [](const std::string& job) { return job == "other"; };
  auto refused = OnCopy("SELECT count(*) FROM spans", "train");
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->rows(0).values(0).integer(), 0);
  auto absent = OnCopy("SELECT count(*) FROM jobs", "no-such-job");
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_EQ(absent->rows(0).values(0).integer(), 0);
  // RunSql's refusals stand.
  EXPECT_EQ(OnCopy("ATTACH 'x' AS y", "other").status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(CopiesGone());
}

TEST_F(SqlCopyTest, BoundedBeforeAndWhileCopying) {
  limits_.max_copy_spans = 19;  // "train" has 19 spans: taken
  auto at_bound = OnCopy("SELECT count(*) FROM spans", "train");
  ASSERT_TRUE(at_bound.ok()) << at_bound.status();
  EXPECT_EQ(at_bound->rows(0).values(0).integer(), 19);
  limits_.max_copy_spans = 18;
  EXPECT_EQ(OnCopy("SELECT count(*) FROM spans", "train").status(),
            absl::ResourceExhaustedError(
                "job train has 19 spans, more than the copy's bound of 18"));
  limits_.max_copy_spans = 19;
  limits_.timeout = absl::ZeroDuration();
  EXPECT_EQ(OnCopy("SELECT count(*) FROM spans", "train").status(),
            absl::ResourceExhaustedError(
                "the query ran past its 0 while its job was copied out of the "
                "store and was stopped"));
  EXPECT_TRUE(CopiesGone());
}

}  // namespace
}  // namespace meridian
