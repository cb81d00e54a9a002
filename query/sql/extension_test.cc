// libmeridian_sqlite.so loaded as a user loads it (sqlite3_load_extension
// on a connection to a store file), over stores written as the collector
// writes them: exact rows, what a constraint leaves unread, and the
// failures (not a store, a broken chunk, writes) leave the connection and
// the store as they were.
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/runfile.h"

namespace meridian {
namespace {

std::string TempPath(const std::string& name) {
  std::string path =
      std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
      "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
  return path;
}

// Writes the stores (sql_test_store.cc): job "train", ranks 0 and 1 on
// two nodes, each a thread with 3 steps of a "step" span, a compute span
// and an 8-byte MPI_Allreduce (step-tagged), then rank 0's counter; job
// "other": one span.
void WriteJobs(const std::string& path) {
  const std::string command =
      Runfile("query/sql/sql_test_store") + " '" + path + "'";
  ASSERT_EQ(system(command.c_str()), 0) << command;
}

// The lines of a text file.
std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  return lines;
}

// A connection to `path` with the extension loaded (`error` gets the
// load's message, if it fails).
sqlite3* Connect(const std::string& path, std::string* error = nullptr) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr),
            SQLITE_OK);
  sqlite3_enable_load_extension(db, 1);
  char* message = nullptr;
  const std::string lib = Runfile("query/sql/libmeridian_sqlite.so");
  if (sqlite3_load_extension(db, lib.c_str(), nullptr, &message) != SQLITE_OK) {
    if (error != nullptr) *error = message ? message : "?";
    sqlite3_free(message);
  }
  return db;
}

// Every row of `sql`, each as its values joined by '|' (NULL: "-").
std::vector<std::string> Rows(sqlite3* db, const std::string& sql,
                              std::string* error = nullptr) {
  std::vector<std::string> rows;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    std::string row;
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      if (i > 0) row += "|";
      const unsigned char* text = sqlite3_column_text(stmt, i);
      row += text ? reinterpret_cast<const char*>(text) : "-";
    }
    rows.push_back(row);
    rc = SQLITE_OK;
  }
  if (rc != SQLITE_DONE && rc != SQLITE_OK) {
    if (error != nullptr)
      *error = sqlite3_errmsg(db);
    else
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  }
  sqlite3_finalize(stmt);
  return rows;
}

std::string One(sqlite3* db, const std::string& sql) {
  auto rows = Rows(db, sql);
  return rows.size() == 1 ? rows[0] : "(" + std::to_string(rows.size()) + ")";
}

class ExtensionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath("sql.db");
    WriteJobs(path_);
    std::string error;
    db_ = Connect(path_, &error);
    ASSERT_EQ(error, "");
  }
  void TearDown() override { sqlite3_close(db_); }
  std::string path_;
  sqlite3* db_ = nullptr;
};

TEST_F(ExtensionTest, SpansAreTheStoredSpans) {
  EXPECT_EQ(One(db_, "SELECT count(*) FROM spans"), "20");
  EXPECT_EQ(Rows(db_,
                 "SELECT job, rank, node, pid, tid, track, category, name, "
                 "raw_start_ns - 1700000000000000000, bytes, peer, comm, seq, "
                 "step, kind FROM spans WHERE job = 'train' AND rank = 1 AND "
                 "step = 2 ORDER BY raw_start_ns, name"),
            (std::vector<std::string>{
                "train|1|node-1|101|8|main|user|compute|2001000|0|-|-|-|2|"
                "complete",
                "train|1|node-1|101|8|main|user|step|2001000|0|-|-|-|2|"
                "complete",
                "train|1|node-1|101|8|main|mpi|MPI_Allreduce|2501000|8|-|5|2|"
                "2|complete",
            }));
  EXPECT_EQ(Rows(db_,
                 "SELECT rank, count(*), sum(bytes), sum(dur_ns) FROM spans "
                 "WHERE job = 'train' AND name = 'MPI_Allreduce' "
                 "GROUP BY rank ORDER BY rank"),
            (std::vector<std::string>{"0|3|24|300000", "1|3|24|300003"}));
  EXPECT_EQ(One(db_, "SELECT job, name FROM spans WHERE job = 'other'"),
            "other|alone");
  EXPECT_EQ(One(db_, "SELECT count(*) FROM spans WHERE job = 'nope'"), "0");
}

TEST_F(ExtensionTest, ArgsCountersAndKinds) {
  EXPECT_EQ(One(db_,
                "SELECT args, kind, value FROM spans WHERE "
                "name = 'loss'"),
            "{\"unit\":\"nats \\\"x\\\"\"}|counter|0.25");
  EXPECT_EQ(One(db_, "SELECT job, rank, name, value FROM counters"),
            "train|0|loss|0.25");
  EXPECT_EQ(One(db_, "SELECT count(*) FROM spans WHERE args IS NULL"), "19");
}

// start_ns and dur_ns are where `meridian export` puts the spans: the
// job's clocks (JobClocks), as sql_test_store found them.
TEST_F(ExtensionTest, CorrectedTimesAreTheExportsPlaces) {
  const std::vector<std::string> want = Lines(path_ + ".placed");
  ASSERT_EQ(want.size(), 19u);
  EXPECT_EQ(Rows(db_,
                 "SELECT raw_start_ns, start_ns, dur_ns FROM spans WHERE "
                 "job = 'train' ORDER BY 1, 2, 3"),
            want);
  EXPECT_EQ(One(db_,
                "SELECT count(*) FROM spans WHERE job = 'train' AND "
                "end_ns <> start_ns + dur_ns"),
            "0");
  // A corrected time range reads what the raw range of it holds.
  const std::string first = One(db_,
                                "SELECT min(start_ns) FROM spans WHERE "
                                "job = 'train' AND step = 1");
  EXPECT_EQ(One(db_,
                "SELECT count(*) FROM spans WHERE job = 'train' AND "
                "start_ns >= " +
                    first + " AND start_ns < " + first + " + 1000000"),
            "6");
}

// Constraints handed down leave the other chunks undecoded: each rank's
// spans are one chunk, and a step range skips chunks of other steps.
TEST_F(ExtensionTest, ConstraintsLeaveOtherChunksUnread) {
  EXPECT_EQ(One(db_,
                "SELECT count(*) FROM spans WHERE job = 'train' AND "
                "rank = 1"),
            "9");
  EXPECT_EQ(One(db_, "SELECT meridian_scan_stats()"),
            "{\"chunks\":2,\"chunks_read\":1,\"spans_decoded\":9,\"rows\":9}");
  EXPECT_EQ(One(db_, "SELECT count(*) FROM spans WHERE step > 5"), "0");
  EXPECT_EQ(One(db_, "SELECT meridian_scan_stats()"),
            "{\"chunks\":3,\"chunks_read\":0,\"spans_decoded\":0,\"rows\":0}");
  EXPECT_EQ(One(db_, "SELECT count(*) FROM spans WHERE raw_start_ns < 0"), "0");
  EXPECT_EQ(One(db_,
                "SELECT json_extract(meridian_scan_stats(), "
                "'$.chunks_read')"),
            "0");
  // Values of other types narrow nothing, and SQLite still checks them.
  EXPECT_EQ(One(db_, "SELECT count(*) FROM spans WHERE rank = '1'"), "9");
  EXPECT_EQ(One(db_, "SELECT count(*) FROM spans WHERE rank = 1.5"), "0");
  EXPECT_EQ(One(db_,
                "SELECT count(*) FROM spans WHERE job = 'train' AND "
                "job = 'other'"),
            "0");
}

// SQLite scans once per branch of an OR and drops repeats by rowid: each
// span's is unique.
TEST_F(ExtensionTest, OrCollateAndTheInt64Limits) {
  EXPECT_EQ(One(db_,
                "SELECT count(*) FROM spans WHERE (job = 'train' AND "
                "rank = 0) OR (job = 'other' AND rank = 0)"),
            "11");
  EXPECT_EQ(One(db_,
                "SELECT count(*) FROM spans WHERE rank = 0 OR "
                "name = 'loss'"),
            "11");
  EXPECT_EQ(One(db_,
                "SELECT count(*) FROM spans WHERE "
                "name = 'mpi_allreduce' COLLATE NOCASE"),
            "6");
  EXPECT_EQ(One(db_,
                "SELECT count(*) FROM spans WHERE "
                "raw_start_ns > -9223372036854775808"),
            "20");
  EXPECT_EQ(One(db_,
                "SELECT count(*) FROM spans WHERE "
                "start_ns < 9223372036854775807 AND "
                "start_ns > -9223372036854775807"),
            "20");
  EXPECT_EQ(One(db_, "SELECT count(*) FROM steps WHERE rank = 0 OR step = 2"),
            "4");
}

TEST_F(ExtensionTest, JoinsDriveTheScanByTheOuterRows) {
  EXPECT_EQ(Rows(db_,
                 "SELECT p.rank, count(s.name) FROM processes p JOIN spans s "
                 "ON s.job = p.job AND s.rank = p.rank WHERE p.job = 'train' "
                 "GROUP BY p.rank ORDER BY p.rank"),
            (std::vector<std::string>{"0|10", "1|9"}));
}

TEST_F(ExtensionTest, JobsProcessesTracksAndSteps) {
  EXPECT_EQ(Rows(db_,
                 "SELECT job, spans, ranks, nodes, world_size, spans_dropped "
                 "FROM jobs ORDER BY job_id"),
            (std::vector<std::string>{"train|19|2|2|2|0", "other|1|1|1|0|0"}));
  EXPECT_EQ(
      Rows(db_,
           "SELECT job, rank, node, pid FROM processes "
           "ORDER BY job, rank"),
      (std::vector<std::string>{"other|0|node-9|999", "train|0|node-0|100",
                                "train|1|node-1|101"}));
  EXPECT_EQ(One(db_,
                "SELECT job, rank, kind, id, track FROM tracks WHERE "
                "job = 'train' AND rank = 1"),
            "train|1|thread|8|main");
  // Three steps of both ranks; each rank's compute is its compute span.
  EXPECT_EQ(One(db_,
                "SELECT count(*), min(step), max(step) FROM steps "
                "WHERE job = 'train'"),
            "6|0|2");
  EXPECT_EQ(One(db_, "SELECT count(*) FROM steps WHERE job = 'other'"), "0");
  // The store's own tables stay readable by their schema's name.
  EXPECT_EQ(One(db_, "SELECT count(*) FROM main.jobs"), "2");
}

TEST_F(ExtensionTest, NothingIsWritten) {
  std::string error;
  Rows(db_, "DELETE FROM spans", &error);
  EXPECT_NE(error.find("may not be modified"), std::string::npos) << error;
  error.clear();
  Rows(db_, "INSERT INTO steps(job) VALUES('x')", &error);
  EXPECT_NE(error.find("may not be modified"), std::string::npos) << error;
  EXPECT_EQ(One(db_, "SELECT count(*) FROM spans"), "20");
}

TEST_F(ExtensionTest, LoadedTwiceIsLoadedOnce) {
  std::string error;
  sqlite3_enable_load_extension(db_, 1);
  char* message = nullptr;
  const std::string lib = Runfile("query/sql/libmeridian_sqlite.so");
  EXPECT_EQ(sqlite3_load_extension(db_, lib.c_str(), nullptr, &message),
            SQLITE_OK);
  sqlite3_free(message);
  EXPECT_EQ(One(db_, "SELECT count(*) FROM spans"), "20");
}

TEST(ExtensionLoadTest, RefusesWhatIsNotAStore) {
  const std::string path = TempPath("not-a-store.db");
  sqlite3* plain = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &plain), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(plain, "CREATE TABLE t(x)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(plain);
  std::string error;
  sqlite3* db = Connect(path, &error);
  EXPECT_EQ(error,
            "error during initialization: libmeridian_sqlite: the main "
            "database is not a Meridian store (open the collector's --db "
            "file, then load the extension)");
  EXPECT_EQ(One(db, "SELECT count(*) FROM t"), "0");
  sqlite3_close(db);
}

// A temp table of the connection's own with a name the tables take: the
// load fails, adding nothing, and says which.
TEST(ExtensionLoadTest, RefusesToHideTheConnectionsOwnTables) {
  const std::string path = TempPath("taken.db");
  WriteJobs(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TEMP VIEW jobs AS SELECT 1 AS x", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_enable_load_extension(db, 1);
  char* message = nullptr;
  const std::string lib = Runfile("query/sql/libmeridian_sqlite.so");
  EXPECT_NE(sqlite3_load_extension(db, lib.c_str(), nullptr, &message),
            SQLITE_OK);
  EXPECT_NE(std::string(message ? message : "").find("named jobs already"),
            std::string::npos)
      << (message ? message : "");
  sqlite3_free(message);
  EXPECT_EQ(One(db, "SELECT x FROM jobs"), "1");
  std::string error;
  Rows(db, "SELECT meridian_scan_stats()", &error);
  EXPECT_NE(error.find("no such function"), std::string::npos) << error;
  sqlite3_close(db);
}

// A chunk that does not decode fails the query that reads it, naming it;
// the connection goes on serving, and other jobs' spans read.
TEST(ExtensionLoadTest, BrokenChunkFailsItsQueryOnly) {
  const std::string path = TempPath("broken.db");
  WriteJobs(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE chunks SET data = x'28b52ffd00' WHERE "
                         "job = (SELECT id FROM jobs WHERE name = 'train') "
                         "AND id = (SELECT min(id) FROM chunks)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  std::string error;
  db = Connect(path, &error);
  ASSERT_EQ(error, "");
  Rows(db, "SELECT count(*) FROM spans WHERE job = 'train'", &error);
  EXPECT_NE(error.find("of job train does not decode"), std::string::npos)
      << error;
  EXPECT_EQ(One(db, "SELECT count(*) FROM spans WHERE job = 'other'"), "1");
  sqlite3_close(db);
}

}  // namespace
}  // namespace meridian
