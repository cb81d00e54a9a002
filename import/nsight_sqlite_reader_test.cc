#include "import/nsight_sqlite_reader.h"

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

constexpr int64_t kEpoch = 1764000000000000000;  // the sample's session start

std::string TempPath(const std::string& name) {
  return std::string(getenv("TEST_TMPDIR")) + "/" + name;
}

std::string SampleSql() {
  const std::string sql =
      FileText(std::string(getenv("TEST_SRCDIR")) +
               "/meridian/import/testdata/nsight_sample.sql");
  EXPECT_FALSE(sql.empty());
  return sql;
}

// A database `name` under TEST_TMPDIR made by `sql` (the sample's, by
// default) and then `edit`.
std::string Build(const std::string& name, const std::string& edit = "",
                  const std::string& sql = SampleSql()) {
  const std::string path = TempPath(name);
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, (sql + edit).c_str(), nullptr, nullptr, &error),
            SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  return path;
}

ImportedTrace Read(const std::string& path, ImportOptions options = {}) {
  auto trace = ReadNsightSqlite(path, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *trace : ImportedTrace{};
}

std::string Error(const std::string& path, ImportOptions options = {}) {
  options.file = "bad.sqlite";
  auto trace = ReadNsightSqlite(path, options);
  EXPECT_FALSE(trace.ok());
  return trace.ok() ? "" : std::string(trace.status().message());
}

std::string Int(const ImportedArg& a) {
  return std::to_string(std::get<int64_t>(a.value));
}

// Every table of the sample, read back span by span: names, categories,
// tracks, exact times, bytes, correlation ids and args.
TEST(NsightSqliteReaderTest, ReadsEveryTableExactly) {
  const ImportedTrace t = Read(Build("sample.sqlite"));
  EXPECT_EQ(t.format, "nsight");

  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.processes[0].pid, 14944);
  EXPECT_EQ(t.processes[0].rank, 0);
  EXPECT_EQ(t.processes[0].node, "sample.sqlite");
  EXPECT_EQ(t.processes[1].pid, 14950);
  EXPECT_EQ(t.processes[1].rank, 1);

  struct Track {
    int process;
    v1::TrackKind kind;
    int64_t id;
    const char* name;
  };
  const Track tracks[] = {
      {0, v1::TRACK_KIND_GPU_STREAM, 7, "GPU 0 stream 7"},
      {0, v1::TRACK_KIND_GPU_STREAM, int64_t{1} << 32 | 7, "GPU 1 stream 7"},
      {1, v1::TRACK_KIND_GPU_STREAM, 13, "GPU 0 stream 13"},
      {0, v1::TRACK_KIND_GPU_STREAM, 14, "GPU 0 stream 14"},
      {0, v1::TRACK_KIND_THREAD, 9596, "main"},  // over "python3"
      {0, v1::TRACK_KIND_THREAD, 9600, "dataloader"},
      {1, v1::TRACK_KIND_THREAD, 14950, "main"},
  };
  ASSERT_EQ(t.tracks.size(), std::size(tracks));
  for (size_t i = 0; i < std::size(tracks); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(t.tracks[i].process, tracks[i].process);
    EXPECT_EQ(t.tracks[i].kind, tracks[i].kind);
    EXPECT_EQ(t.tracks[i].id, tracks[i].id);
    EXPECT_EQ(t.tracks[i].name, tracks[i].name);
  }

  struct Span {
    int track;
    v1::Category category;
    v1::SpanKind kind;
    const char* name;
    int64_t start;  // SessionNs
    int64_t dur;
    int64_t bytes;
    uint64_t correlation;
  };
  const auto kComplete = v1::SPAN_KIND_COMPLETE;
  const Span spans[] = {
      {0, v1::CATEGORY_CUDA_KERNEL, kComplete, "void gemm<float>(float*, int)",
       2000000, 150000, 0, 101},
      {1, v1::CATEGORY_CUDA_KERNEL, kComplete,
       "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<"
       "4096ul>)",
       2100000, 300000, 0, 102},
      {2, v1::CATEGORY_CUDA_KERNEL, kComplete, "void gemm<float>(float*, int)",
       3000000, 50000, 0, 7},
      {0, v1::CATEGORY_CUDA_MEMCPY, kComplete, "Memcpy HtoD", 1500000, 100000,
       4194304, 100},
      {3, v1::CATEGORY_CUDA_MEMCPY, kComplete, "Memcpy PtoP", 2500000, 20000,
       65536, 103},
      {0, v1::CATEGORY_CUDA_MEMSET, kComplete, "Memset", 1400000, 10000, 1024,
       99},
      {4, v1::CATEGORY_CUDA_RUNTIME, kComplete, "cudaMemsetAsync", 1390000,
       5000, 0, 99},
      {4, v1::CATEGORY_CUDA_RUNTIME, kComplete, "cudaMemcpyAsync", 1490000,
       10500, 0, 100},
      {4, v1::CATEGORY_CUDA_RUNTIME, kComplete, "cudaLaunchKernel", 1990000,
       9000, 0, 101},
      {5, v1::CATEGORY_CUDA_RUNTIME, kComplete, "cuLaunchKernel", 2090000, 5000,
       0, 102},
      {4, v1::CATEGORY_CUDA_SYNC, kComplete, "cudaStreamSynchronize", 2600000,
       100000, 0, 104},
      {6, v1::CATEGORY_CUDA_RUNTIME, kComplete, "cudaLaunchKernel", 2990000,
       5000, 0, 7},
      {4, v1::CATEGORY_NVTX, kComplete, "step 1", 1300000, 1500000, 0, 0},
      {5, v1::CATEGORY_NVTX, kComplete, "forward", 1350000, 1100000, 0, 0},
      {4, v1::CATEGORY_NVTX, v1::SPAN_KIND_INSTANT, "checkpoint", 2550000, 0, 0,
       0},
      {6, v1::CATEGORY_NVTX, kComplete, "step 1", 2980000, 120000, 0, 0},
  };
  ASSERT_EQ(t.spans.size(), std::size(spans));
  for (size_t i = 0; i < std::size(spans); ++i) {
    SCOPED_TRACE(spans[i].name);
    const ImportedSpan& s = t.spans[i];
    EXPECT_EQ(s.track, spans[i].track);
    EXPECT_EQ(s.category, spans[i].category);
    EXPECT_EQ(s.kind, spans[i].kind);
    EXPECT_EQ(s.name, spans[i].name);
    EXPECT_EQ(s.start_ns, kEpoch + spans[i].start);
    EXPECT_EQ(s.dur_ns, spans[i].dur);
    EXPECT_EQ(s.bytes, spans[i].bytes);
    EXPECT_EQ(s.correlation, spans[i].correlation);
  }

  // Args, as Meridian's CUPTI and NVTX capture write them.
  const ImportedSpan& gemm = t.spans[0];
  ASSERT_EQ(gemm.args.size(), 4u);
  EXPECT_EQ(gemm.args[0].key, "grid");
  EXPECT_EQ(std::get<std::string>(gemm.args[0].value), "128,1,1");
  EXPECT_EQ(gemm.args[1].key, "block");
  EXPECT_EQ(std::get<std::string>(gemm.args[1].value), "256,1,1");
  EXPECT_EQ(gemm.args[2].key, "registers");
  EXPECT_EQ(Int(gemm.args[2]), "32");
  EXPECT_EQ(gemm.args[3].key, "smem");
  EXPECT_EQ(Int(gemm.args[3]), "4096");
  const ImportedSpan& htod = t.spans[3];
  ASSERT_EQ(htod.args.size(), 2u);
  EXPECT_EQ(htod.args[0].key, "src");
  EXPECT_EQ(std::get<std::string>(htod.args[0].value), "pageable");
  EXPECT_EQ(htod.args[1].key, "dst");
  EXPECT_EQ(std::get<std::string>(htod.args[1].value), "device");
  const ImportedSpan& ptop = t.spans[4];
  ASSERT_EQ(ptop.args.size(), 4u);
  EXPECT_EQ(ptop.args[2].key, "src_device");
  EXPECT_EQ(Int(ptop.args[2]), "0");
  EXPECT_EQ(ptop.args[3].key, "dst_device");
  EXPECT_EQ(Int(ptop.args[3]), "1");
  EXPECT_TRUE(t.spans[5].args.empty());
  const ImportedSpan& forward = t.spans[13];
  ASSERT_EQ(forward.args.size(), 2u);
  EXPECT_EQ(forward.args[0].key, "domain");
  EXPECT_EQ(std::get<std::string>(forward.args[0].value), "Megatron");
  EXPECT_EQ(forward.args[1].key, "payload");
  EXPECT_EQ(Int(forward.args[1]), "42");
  const ImportedSpan& checkpoint = t.spans[14];
  ASSERT_EQ(checkpoint.args.size(), 1u);
  EXPECT_EQ(std::get<double>(checkpoint.args[0].value), 0.5);
  EXPECT_TRUE(t.spans[12].args.empty());  // domain 0: none

  ASSERT_EQ(t.notes.size(), 2u);
  EXPECT_EQ(t.notes[0], "1 NVTX ranges without an end were skipped");
  EXPECT_EQ(t.notes[1],
            "1 NVTX events of types not imported (eventType 33: 1)");
}

// A file read whole (the CLI's way, and the fuzz target's) reads the same.
TEST(NsightSqliteReaderTest, ImageReadsLikeTheFile) {
  const std::string path = Build("image.sqlite");
  const ImportedTrace from_file = Read(path);
  const std::string image = FileText(path);
  ImportOptions options;
  options.file = "image.sqlite";
  auto from_image = ReadNsightSqliteImage(image, options);
  ASSERT_TRUE(from_image.ok()) << from_image.status();
  ASSERT_EQ(from_image->spans.size(), from_file.spans.size());
  for (size_t i = 0; i < from_file.spans.size(); ++i) {
    EXPECT_EQ(from_image->spans[i].name, from_file.spans[i].name);
    EXPECT_EQ(from_image->spans[i].start_ns, from_file.spans[i].start_ns);
    EXPECT_EQ(from_image->spans[i].track, from_file.spans[i].track);
  }
  EXPECT_EQ(from_image->tracks.size(), from_file.tracks.size());
  EXPECT_EQ(from_image->processes[0].node, "image.sqlite");
}

TEST(NsightSqliteReaderTest, LooksLikeSqlite) {
  EXPECT_TRUE(LooksLikeSqlite(std::string_view("SQLite format 3\0xyz", 19)));
  EXPECT_FALSE(LooksLikeSqlite("SQLite format 3"));  // no NUL: cut short
  EXPECT_FALSE(LooksLikeSqlite("SQLite format 2\0"));
  EXPECT_FALSE(LooksLikeSqlite("[{\"ph\":\"X\"}]"));
  EXPECT_FALSE(LooksLikeSqlite(""));
}

// Without TARGET_INFO_SESSION_START_TIME: options.epoch_ns, else placed to
// end at the file's modification time, with a note.
TEST(NsightSqliteReaderTest, TimesWithoutSessionStart) {
  const std::string path =
      Build("nostart.sqlite", "DROP TABLE TARGET_INFO_SESSION_START_TIME;");
  ImportOptions options;
  options.epoch_ns = kEpoch + 7;
  ImportedTrace t = Read(path, options);
  ASSERT_EQ(t.spans.size(), 16u);
  EXPECT_EQ(t.spans[0].start_ns, kEpoch + 7 + 2000000);

  options = {};
  options.fallback_end_ns = kEpoch;
  t = Read(path, options);
  ASSERT_EQ(t.spans.size(), 16u);
  // The last end is the last "step 1" (3100000): it ends at kEpoch.
  EXPECT_EQ(t.spans[15].start_ns + t.spans[15].dur_ns, kEpoch);
  EXPECT_EQ(t.spans[0].start_ns, kEpoch - 3100000 + 2000000);
  ASSERT_EQ(t.notes.size(), 3u);
  EXPECT_TRUE(absl::StrContains(t.notes[2], "placed to end at the file's"))
      << t.notes[2];

  // Neither: times near 1970 are refused, naming the table and row.
  EXPECT_TRUE(absl::StrContains(
      Error(path),
      "bad.sqlite: table CUPTI_ACTIVITY_KIND_KERNEL row 1 "
      "(\"void gemm<float>(float*, int)\"): column \"start\": "
      "2000000 ns + epoch 0 ns is not a time between 2000 and "
      "2100"));
}

// nsys creates tables lazily: any may be missing. Without MPI_RANKS,
// ranks come from options.rank in PID order; without ThreadNames, threads
// are "thread TID".
TEST(NsightSqliteReaderTest, MissingTablesAreNoError) {
  const std::string path = Build(
      "lazy.sqlite",
      "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE "
      "CUPTI_ACTIVITY_KIND_MEMCPY; DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET; "
      "DROP TABLE NVTX_EVENTS; DROP TABLE MPI_RANKS; DROP TABLE ThreadNames; "
      "DROP TABLE META_DATA_EXPORT;");
  ImportOptions options;
  options.rank = 4;
  options.node = "gpu07";
  const ImportedTrace t = Read(path, options);
  ASSERT_EQ(t.spans.size(), 6u);
  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.processes[0].rank, 4);
  EXPECT_EQ(t.processes[1].rank, 5);
  EXPECT_EQ(t.processes[0].node, "gpu07");
  EXPECT_EQ(t.tracks[0].name, "thread 9596");
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(
      t.notes[0],
      "tables not in the file (nsys writes a table only for activity it "
      "recorded): CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, "
      "CUPTI_ACTIVITY_KIND_MEMSET, NVTX_EVENTS");

  // An export with none of the activity tables imports nothing.
  const ImportedTrace empty = Read(
      Build("strings_only.sqlite", "",
            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"));
  EXPECT_TRUE(empty.spans.empty());
  EXPECT_TRUE(empty.processes.empty());
}

// Processes that MPI_RANKS does not name take the free ranks.
TEST(NsightSqliteReaderTest, UnnamedProcessesTakeFreeRanks) {
  const ImportedTrace t = Read(
      Build("ranks.sqlite",
            "UPDATE MPI_RANKS SET rank = 0 WHERE globalTid = 72057844857322086;"
            "DELETE FROM MPI_RANKS WHERE globalTid = 72057844756653436;"));
  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.processes[0].rank, 1);  // PID 14944: rank 0 is 14950's
  EXPECT_EQ(t.processes[1].rank, 0);
}

TEST(NsightSqliteReaderTest, RefusesFilesThatAreNotNsightExports) {
  const std::string text = TempPath("trace.json");
  std::ofstream(text) << "[{\"ph\":\"X\"}]";
  EXPECT_EQ(Error(text),
            "bad.sqlite: not an SQLite database (an Nsight Systems export is "
            "one: nsys export --type sqlite)");

  auto missing = ReadNsightSqlite(TempPath("absent.sqlite"), {});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);

  const std::string other =
      Build("other.sqlite", "", "CREATE TABLE spans (id INTEGER, name TEXT);");
  EXPECT_EQ(Error(other),
            "bad.sqlite: an SQLite database but not an Nsight Systems export "
            "(none of its tables, e.g. CUPTI_ACTIVITY_KIND_KERNEL or "
            "StringIds)");

  EXPECT_EQ(Error(Build("v4.sqlite",
                        "UPDATE META_DATA_EXPORT SET value = '4.0.0' "
                        "WHERE name = 'EXPORT_SCHEMA_VERSION';")),
            "bad.sqlite: Nsight export schema version 4.0.0; this reader knows "
            "version 3.x (tables and columns may differ)");
  EXPECT_EQ(Error(Build("vx.sqlite",
                        "UPDATE META_DATA_EXPORT SET value = 'x' "
                        "WHERE name = 'EXPORT_SCHEMA_VERSION';")),
            "bad.sqlite: META_DATA_EXPORT EXPORT_SCHEMA_VERSION \"x\" is not "
            "major.minor.micro");

  // A view where a table should be is not read (views are off).
  const std::string view =
      Build("view.sqlite", "",
            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
            "CREATE VIEW NVTX_EVENTS AS SELECT 1 AS start;");
  EXPECT_TRUE(Read(view).spans.empty());
}

TEST(NsightSqliteReaderTest, RefusesMissingColumns) {
  EXPECT_EQ(Error(Build("nostream.sqlite",
                        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN "
                        "streamId;")),
            "bad.sqlite: table CUPTI_ACTIVITY_KIND_KERNEL has no column "
            "\"streamId\" (export schema 3.28.1; this reader knows 3.x: a "
            "renamed column?)");
  EXPECT_EQ(Error(Build("nonames.sqlite",
                        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN "
                        "demangledName; ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL "
                        "DROP COLUMN shortName; ALTER TABLE "
                        "CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN mangledName;")),
            "bad.sqlite: table CUPTI_ACTIVITY_KIND_KERNEL has no column "
            "demangledName, shortName or mangledName");
  EXPECT_EQ(Error(Build("notext.sqlite",
                        "ALTER TABLE NVTX_EVENTS DROP COLUMN text; ALTER TABLE "
                        "NVTX_EVENTS DROP COLUMN textId;")),
            "bad.sqlite: table NVTX_EVENTS has no column text or textId");
  // Optional columns may go: the args they gave go with them.
  const ImportedTrace t =
      Read(Build("nogrid.sqlite",
                 "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN gridY;"));
  ASSERT_EQ(t.spans[0].args.size(), 3u);
  EXPECT_EQ(t.spans[0].args[0].key, "block");
}

TEST(NsightSqliteReaderTest, RefusesBadValuesNamingTableRowAndColumn) {
  struct Case {
    const char* edit;
    const char* error;
  };
  const Case cases[] = {
      {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE "
       "correlationId = 102;",
       "table CUPTI_ACTIVITY_KIND_KERNEL row 2: column \"start\" is not an "
       "integer"},
      {"UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = -1;",
       "table CUPTI_ACTIVITY_KIND_MEMCPY row 1: column \"bytes\" is -1, "
       "outside [0, 1125899906842624]: an absurd value"},
      {"UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET end = 1000;",
       "table CUPTI_ACTIVITY_KIND_MEMSET row 1: column \"end\" is 1000, "
       "before start 1400000"},
      {"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = 9000000000000000000 "
       "WHERE correlationId = 7;",
       "table CUPTI_ACTIVITY_KIND_RUNTIME row 6: column \"end\" is "
       "8999999999997010000 ns after start: longer than 30 days"},
      {"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 77 WHERE "
       "correlationId = 104;",
       "table CUPTI_ACTIVITY_KIND_RUNTIME row 5: column \"nameId\" is string "
       "id 77, which StringIds does not hold"},
      {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = -3 WHERE "
       "correlationId = 7;",
       "table CUPTI_ACTIVITY_KIND_KERNEL row 3: column \"deviceId\" is -3, "
       "outside [0, 2147483647]: an absurd value"},
      {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = NULL WHERE "
       "correlationId = 7;",
       "table CUPTI_ACTIVITY_KIND_KERNEL row 3: column \"globalPid\" is NULL"},
      {"UPDATE NVTX_EVENTS SET globalTid = NULL WHERE text = 'checkpoint';",
       "table NVTX_EVENTS row 5: column \"globalTid\" is NULL"},
      {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -4000000000000000000, "
       "end = -4000000000000000000 WHERE correlationId = 7;",
       "table CUPTI_ACTIVITY_KIND_KERNEL row 3 (\"void gemm<float>(float*, "
       "int)\"): column \"start\": -4000000000000000000 ns + session start "
       "1764000000000000000 ns is not a time between 2000 and 2100"},
      {"UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 12;",
       "table TARGET_INFO_SESSION_START_TIME row 1: column \"utcEpochNs\" is "
       "12, outside [946684800000000000, 4102444800000000000]"},
      {"INSERT INTO MPI_RANKS VALUES (72057844756653440, 3);",
       "table MPI_RANKS row 3: column \"rank\" gives process 14944 rank 3 "
       "after rank 0"},
      {"INSERT INTO MPI_RANKS VALUES (72057594037927936, 1);",
       "table MPI_RANKS row 3: column \"rank\" gives rank 1 to a second "
       "process (0)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.edit);
    const std::string error = Error(Build("bad.sqlite", c.edit));
    EXPECT_TRUE(absl::StrContains(error, c.error)) << error;
  }
  EXPECT_EQ(Error(Build("twice.sqlite", "",
                        "CREATE TABLE StringIds (id INTEGER, value TEXT);"
                        "INSERT INTO StringIds VALUES (1, 'a'), (1, 'b');")),
            "bad.sqlite: table StringIds row 2: column \"id\" repeats id 1");
}

// A cut file is refused by its header before SQLite reads it; a damaged
// page is SQLite's "malformed" error, as a value.
TEST(NsightSqliteReaderTest, RefusesTruncatedAndCorruptedFiles) {
  const std::string path = Build("whole.sqlite");
  const std::string bytes = FileText(path);
  ASSERT_EQ(bytes.size() % 4096, 0u);

  const std::string cut = TempPath("cut.sqlite");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, 3 * 4096);
  EXPECT_EQ(Error(cut),
            "bad.sqlite: truncated: its header says " +
                std::to_string(bytes.size() / 4096) + " pages of 4096 bytes (" +
                std::to_string(bytes.size()) + " bytes) but it has 12288");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, 5000);
  EXPECT_TRUE(absl::StrContains(Error(cut), "not a whole number of its"));
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, 40);
  EXPECT_TRUE(absl::StrContains(Error(cut), "cut short: 40 bytes"));

  // The kernel table's root page overwritten.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT rootpage FROM sqlite_master WHERE name "
                               "= 'CUPTI_ACTIVITY_KIND_KERNEL'",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  const int root = sqlite3_column_int(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  std::string damaged = bytes;
  for (size_t i = (root - 1) * 4096; i < root * 4096u; ++i) damaged[i] = 'Z';
  const std::string bad = TempPath("damaged.sqlite");
  std::ofstream(bad, std::ios::binary) << damaged;
  const std::string error = Error(bad);
  EXPECT_TRUE(absl::StrContains(error, "CUPTI_ACTIVITY_KIND_KERNEL")) << error;
  EXPECT_TRUE(absl::StrContains(error, "(a damaged or truncated file)"))
      << error;

  // The same damage in memory.
  auto image = ReadNsightSqliteImage(damaged, {});
  ASSERT_FALSE(image.ok());
  EXPECT_TRUE(absl::StartsWith(image.status().message(), "(memory): "));
}

}  // namespace
}  // namespace meridian
