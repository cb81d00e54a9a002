// RunSql (`meridian sql`) over a store sql_test_store writes: answers,
// scoping to the jobs a caller may read, and hostile statements refused or
// stopped at their bounds with the store as it was.
#include "query/sql/sql_query.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/runfile.h"

namespace meridian {
namespace {

class SqlQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ =
        std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
        "/sql_query.db";
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
    const std::string command =
        Runfile("query/sql/sql_test_store") + " '" + path_ + "'";
    ASSERT_EQ(system(command.c_str()), 0);
  }

  absl::StatusOr<v1::SqlReply> Run(const std::string& query,
                                   const std::string& job = "",
                                   int64_t max_rows = 0) {
    v1::SqlRequest request;
    request.set_query(query);
    request.set_job(job);
    request.set_max_rows(max_rows);
    return RunSql(path_, request, limits_, may_read_);
  }

  // The reply's rows, values joined by '|' ("-" for NULL).
  static std::vector<std::string> Rows(const v1::SqlReply& reply) {
    std::vector<std::string> rows;
    for (const v1::SqlRow& row : reply.rows()) {
      std::string line;
      for (int i = 0; i < row.values_size(); ++i) {
        if (i > 0) line += "|";
        const v1::SqlValue& v = row.values(i);
        switch (v.value_case()) {
          case v1::SqlValue::kInteger:
            line += std::to_string(v.integer());
            break;
          case v1::SqlValue::kReal:
            line += "r" + std::to_string(v.real());
            break;
          case v1::SqlValue::kText:
            line += v.text();
            break;
          case v1::SqlValue::kBlob:
            line += "b" + std::to_string(v.blob().size());
            break;
          default:
            line += "-";
        }
      }
      rows.push_back(line);
    }
    return rows;
  }

  std::vector<std::string> Answer(const std::string& query,
                                  const std::string& job = "") {
    auto reply = Run(query, job);
    EXPECT_TRUE(reply.ok()) << query << ": " << reply.status();
    return reply.ok() ? Rows(*reply) : std::vector<std::string>{};
  }

  std::string path_;
  SqlLimits limits_;
  std::function<bool(const std::string&)> may_read_;
};

TEST_F(SqlQueryTest, AnswersWithColumnsAndTypedValues) {
  auto reply =
      Run("SELECT rank, count(*) AS calls, sum(bytes), NULL, 0.5, x'0102' FROM "
          "spans WHERE job = 'train' AND name = 'MPI_Allreduce' GROUP BY rank "
          "ORDER BY rank");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->columns_size(), 6);
  EXPECT_EQ(reply->columns(1), "calls");
  EXPECT_EQ(Rows(*reply), (std::vector<std::string>{"0|3|24|-|r0.500000|b2",
                                                    "1|3|24|-|r0.500000|b2"}));
  // The tables' views read the store's tables behind them.
  EXPECT_EQ(Answer("SELECT job, ranks FROM jobs ORDER BY job"),
            (std::vector<std::string>{"other|1", "train|2"}));
  EXPECT_EQ(Answer("SELECT count(*) FROM steps"),
            (std::vector<std::string>{"6"}));
}

TEST_F(SqlQueryTest, ScopedToTheJobsTheCallerMayRead) {
  may_read_ = [](const std::string& job) { return job == "other"; };
  EXPECT_EQ(Answer("SELECT DISTINCT job FROM spans"),
            (std::vector<std::string>{"other"}));
  EXPECT_EQ(Answer("SELECT job FROM jobs"),
            (std::vector<std::string>{"other"}));
  EXPECT_EQ(Answer("SELECT count(*) FROM processes WHERE job = 'train'"),
            (std::vector<std::string>{"0"}));
  EXPECT_EQ(Answer("SELECT count(*) FROM steps"),
            (std::vector<std::string>{"0"}));
  may_read_ = nullptr;
  // A request that names a job sees that job only.
  EXPECT_EQ(Answer("SELECT DISTINCT job FROM spans", "train"),
            (std::vector<std::string>{"train"}));
  EXPECT_EQ(Answer("SELECT count(*) FROM tracks", "other"),
            (std::vector<std::string>{"1"}));
}

TEST_F(SqlQueryTest, RefusesAnythingButOneReadOnlySelect) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"ATTACH DATABASE '/tmp/x.db' AS x", "ATTACH is refused"},
      {"PRAGMA writable_schema = 1", "PRAGMA writable_schema is refused"},
      {"DELETE FROM main.jobs", "anything but a SELECT"},
      {"CREATE TABLE t(x)", "anything but a SELECT"},
      {"SELECT load_extension('/tmp/evil.so')", "load_extension() is refused"},
      {"SELECT hex(fts3_tokenizer('simple'))", "fts3_tokenizer() is refused"},
      {"SELECT * FROM pragma_table_info('chunks')",
       "a table-valued function (pragma_*, json_each) is refused"},
      {"SELECT value FROM json_each('[1, 2]')", "a table-valued function"},
      {"UPDATE main.jobs SET name = 'x'", "UPDATE is refused"},
      {"VACUUM INTO '/tmp/copy.db'", "read-only statements only"},
      {"SELECT * FROM main.chunks", "reading the store's table chunks"},
      {"SELECT s FROM main.strings", "reading the store's table strings"},
      {"BEGIN", "anything but a SELECT"},
  };
  for (const auto& [query, said] : refused) {
    auto reply = Run(query);
    ASSERT_FALSE(reply.ok()) << query;
    EXPECT_TRUE(absl::IsPermissionDenied(reply.status())) << reply.status();
    EXPECT_NE(reply.status().message().find(said), std::string::npos)
        << query << ": " << reply.status();
  }
  // The tables themselves have no way to change.
  auto write = Run("DELETE FROM spans");
  EXPECT_TRUE(absl::IsPermissionDenied(write.status())) << write.status();
  EXPECT_NE(write.status().message().find("may not be modified"),
            std::string::npos);
  auto two = Run("SELECT 1; DELETE FROM main.jobs");
  EXPECT_TRUE(absl::IsInvalidArgument(two.status())) << two.status();
  EXPECT_NE(two.status().message().find("one statement at a time"),
            std::string::npos);
  EXPECT_TRUE(Run("SELECT 1;  ;").ok());
  EXPECT_TRUE(Run("SELECT 1; -- a comment\n /* and another */").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(Run("").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Run("SELEC 1").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Run("SELECT 1", "", -1).status()));
  // Nothing changed.
  EXPECT_EQ(Answer("SELECT count(*) FROM spans"),
            (std::vector<std::string>{"20"}));
}

TEST_F(SqlQueryTest, StopsAtItsBounds) {
  limits_.timeout = absl::Milliseconds(300);
  auto endless =
      Run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
          "SELECT count(*) FROM c");
  EXPECT_TRUE(absl::IsResourceExhausted(endless.status())) << endless.status();
  EXPECT_NE(endless.status().message().find("ran past its 300ms"),
            std::string::npos)
      << endless.status();

  // Work inside the tables (a scan started per outer row) stops too.
  auto correlated =
      Run("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
          "SELECT sum((SELECT count(*) FROM spans WHERE job = 'train' AND "
          "rank = n % 2)) FROM r");
  EXPECT_TRUE(absl::IsResourceExhausted(correlated.status()))
      << correlated.status();
  EXPECT_NE(correlated.status().message().find("ran past its 300ms"),
            std::string::npos)
      << correlated.status();

  auto rows = Run("SELECT * FROM spans a, spans b", "", 100);
  EXPECT_TRUE(absl::IsResourceExhausted(rows.status())) << rows.status();
  EXPECT_NE(rows.status().message().find("more than 100 rows"),
            std::string::npos);

  limits_.timeout = absl::Seconds(30);
  limits_.max_memory_bytes = 1 << 20;
  auto memory =
      Run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
          "LIMIT 1000000) SELECT length(group_concat(x)) FROM c");
  EXPECT_TRUE(absl::IsResourceExhausted(memory.status())) << memory.status();
  EXPECT_NE(memory.status().message().find("more than 1 MiB of memory"),
            std::string::npos)
      << memory.status();

  limits_ = SqlLimits();
  EXPECT_EQ(Answer("SELECT count(*) FROM spans WHERE job = 'train'"),
            (std::vector<std::string>{"19"}));
}

TEST_F(SqlQueryTest, AStoreThatIsNotThere) {
  path_ = "/nonexistent/dir/m.db";
  EXPECT_TRUE(absl::IsUnavailable(Run("SELECT 1").status()));
}

}  // namespace
}  // namespace meridian
