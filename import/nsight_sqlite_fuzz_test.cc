#include <sqlite3.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/file_text.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

// The image of a database made by `sql` in memory, with 512-byte pages so
// that mutations often land on what the reader reads.
std::string Image(const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, ("PRAGMA page_size = 512;" + sql).c_str(), nullptr,
                         nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_int64 size = 0;
  unsigned char* bytes = sqlite3_serialize(db, "main", &size, 0);
  std::string image(reinterpret_cast<char*>(bytes), static_cast<size_t>(size));
  sqlite3_free(bytes);
  sqlite3_close(db);
  return image;
}

// The test's sample export (every table), and a small one with a
// session start, strings and NVTX only.
std::vector<std::string> Seeds() {
  const std::string sample =
      FileText(std::string(getenv("TEST_SRCDIR")) +
               "/meridian/import/testdata/nsight_sample.sql");
  EXPECT_FALSE(sample.empty());
  return {
      Image(sample),
      Image("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
            "INSERT INTO StringIds VALUES (1, 'step');"
            "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER);"
            "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES "
            "(1764000000000000000);"
            "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType "
            "INTEGER, text TEXT, globalTid INTEGER, textId INTEGER);"
            "INSERT INTO NVTX_EVENTS VALUES (10, 20, 59, NULL, 4294967297, 1),"
            "(15, NULL, 34, 'mark', 4294967297, NULL);"),
  };
}

TEST(NsightSqliteFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("nsight_sqlite", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("nsight_sqlite")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 1000), 2002u);
}

}  // namespace
}  // namespace meridian
