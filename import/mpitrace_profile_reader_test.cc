#include "import/mpitrace_profile_reader.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

std::string Testdata(const std::string& name) {
  const std::string text = FileText(std::string(getenv("TEST_SRCDIR")) +
                                    "/meridian/import/testdata/" + name);
  EXPECT_FALSE(text.empty()) << name;
  return text;
}

MpitraceProfile Read(const std::string& text) {
  auto profile = ReadMpitraceProfile(text, "mpi_profile.1234.0");
  EXPECT_TRUE(profile.ok()) << profile.status();
  return profile.ok() ? *profile : MpitraceProfile{};
}

std::string Error(const std::string& text) {
  auto profile = ReadMpitraceProfile(text, "p");
  EXPECT_FALSE(profile.ok());
  return profile.ok() ? "" : std::string(profile.status().message());
}

struct Bucket {
  int32_t log2;
  int64_t calls;
  int64_t bytes;
  int64_t time_ns;
};

void ExpectBuckets(const MpitraceRoutine& r,
                   const std::vector<Bucket>& expected) {
  SCOPED_TRACE(r.name);
  ASSERT_EQ(r.buckets.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r.buckets[i].log2, expected[i].log2);
    EXPECT_EQ(r.buckets[i].calls, expected[i].calls);
    EXPECT_EQ(r.buckets[i].bytes, expected[i].bytes);
    EXPECT_EQ(r.buckets[i].time_ns, expected[i].time_ns);
  }
}

void ExpectRankZero(const MpitraceProfile& p) {
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.world_size, 4);
  EXPECT_FALSE(p.all_communicators);
  EXPECT_EQ(p.interval, "MPI_Init() to MPI_Finalize()");

  struct Routine {
    const char* name;
    int64_t calls;
    double avg_bytes;
    int64_t bytes;
    int64_t time_ns;
  };
  const Routine routines[] = {
      {"MPI_Comm_rank", 4, 0.0, 0, 0},
      {"MPI_Comm_size", 4, 0.0, 0, 0},
      {"MPI_Isend", 50, 2.0, 100, 1000000},
      {"MPI_Waitall", 50, 0.0, 0, 20000000},
      {"MPI_Bcast", 20, 209832.6, 4196652, 125000000},
      {"MPI_Barrier", 3, 0.0, 0, 4000000},
      {"MPI_Allreduce", 1000, 671096.6, 671096600, 3750000000},
  };
  ASSERT_EQ(p.routines.size(), std::size(routines));
  for (size_t i = 0; i < std::size(routines); ++i) {
    SCOPED_TRACE(routines[i].name);
    EXPECT_EQ(p.routines[i].name, routines[i].name);
    EXPECT_EQ(p.routines[i].calls, routines[i].calls);
    EXPECT_DOUBLE_EQ(p.routines[i].avg_bytes, routines[i].avg_bytes);
    EXPECT_EQ(p.routines[i].bytes, routines[i].bytes);
    EXPECT_EQ(p.routines[i].time_ns, routines[i].time_ns);
  }
  EXPECT_TRUE(p.routines[0].buckets.empty());
  EXPECT_TRUE(p.routines[3].buckets.empty());
  // 0.0 -> -1, 2.5 -> 1.
  ExpectBuckets(p.routines[2], {{-1, 10, 0, 0}, {1, 40, 100, 1000000}});
  // 256.0 (bin (128, 256]) and 300.5 (bin (256, 512]) share bucket 8.
  ExpectBuckets(p.routines[4], {{2, 8, 32, 1000000},
                                {8, 8, 512 + 1803, 12000000},
                                {20, 4, 4194304, 112000000}});
  ExpectBuckets(p.routines[6],
                {{3, 990, 7920, 2500000000}, {26, 10, 671088640, 1250000000}});

  EXPECT_EQ(p.comm_time_roles, std::vector<std::string>{"minimum"});
  EXPECT_EQ(p.comm_ns, 3900000000);
  EXPECT_EQ(p.elapsed_ns, 12345000000);
  EXPECT_EQ(p.user_ns, 11002000000);
  EXPECT_EQ(p.system_ns, 250000000);
  EXPECT_EQ(p.max_rss_bytes, 537133056);  // 512.25 MiB
  EXPECT_FALSE(p.sync_ns.has_value());
  EXPECT_FALSE(p.mpi_io_ns.has_value());

  EXPECT_EQ(p.min_comm_rank, 0);
  EXPECT_EQ(p.median_comm_rank, 2);
  EXPECT_EQ(p.max_comm_rank, 3);
  ASSERT_EQ(p.ranks.size(), 4u);
  const MpitraceRankTotals& r3 = p.ranks[3];
  EXPECT_EQ(r3.rank, 3);
  EXPECT_EQ(r3.host, "nid00103");
  EXPECT_EQ(r3.comm_ns, 5820000000);
  EXPECT_EQ(r3.elapsed_ns, 12400000000);
  EXPECT_EQ(r3.user_ns, 11500000000);
  EXPECT_EQ(r3.system_ns, 300000000);
  EXPECT_EQ(r3.max_rss_bytes, 498 * 1048576);
  EXPECT_EQ(r3.context_switches, 1305);
  EXPECT_EQ(p.ranks[1].host, "nid00102");
  EXPECT_EQ(p.ranks[2].comm_ns, 4100000000);
  EXPECT_EQ(p.host, "nid00102");
}

TEST(MpitraceProfileReaderTest, ReadsRankZeroWithItsSummaryOfAllRanks) {
  ExpectRankZero(Read(Testdata("mpi_profile.1234.0")));
}

// Another rank's file: no summary of all ranks; the section by
// communicator size (with a routine table of its own) is skipped.
TEST(MpitraceProfileReaderTest, ReadsAnotherRankSkippingUnknownSections) {
  const MpitraceProfile p = Read(Testdata("mpi_profile.1234.3"));
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.world_size, 4);
  ASSERT_EQ(p.routines.size(), 5u);
  EXPECT_EQ(p.routines[4].name, "MPI_Allreduce");
  EXPECT_EQ(p.routines[4].time_ns, 5123000000);
  ExpectBuckets(p.routines[4],
                {{3, 990, 7920, 3000000000}, {26, 10, 671088640, 2123000000}});
  EXPECT_EQ(p.comm_time_roles, std::vector<std::string>{"maximum"});
  EXPECT_EQ(p.sync_ns, 512000000);
  EXPECT_EQ(p.comm_ns, 5823000000);
  EXPECT_EQ(p.elapsed_ns, 12401000000);
  EXPECT_EQ(p.max_rss_bytes, 498 * 1048576);
  EXPECT_TRUE(p.ranks.empty());
  EXPECT_FALSE(p.min_comm_rank.has_value());
  EXPECT_EQ(p.host, "");
}

// Sentinels, not layout: the same file with its whitespace collapsed, its
// dashed and blank lines gone and CRLF line ends reads the same.
TEST(MpitraceProfileReaderTest, KeysOnTextNotLayout) {
  std::istringstream in(Testdata("mpi_profile.1234.0"));
  std::string squeezed;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string word;
    std::string out;
    while (words >> word) out += (out.empty() ? "" : " ") + word;
    if (out.empty() || out.find_first_not_of('-') == std::string::npos) {
      continue;
    }
    squeezed += out + "\r\n";
  }
  ExpectRankZero(Read(squeezed));
  // "(all communicators)" and other names of units.
  const MpitraceProfile p = Read(
      absl::StrReplaceAll(squeezed, {{"of 4:", "of 4: (all communicators)"},
                                     {"MiB.", "MBytes."},
                                     {"size(MiB)", "size(MB)"},
                                     {" host ", " hostname "}}));
  EXPECT_TRUE(p.all_communicators);
  EXPECT_EQ(p.max_rss_bytes, 537133056);
  EXPECT_EQ(p.ranks[3].max_rss_bytes, 498 * 1048576);
  EXPECT_EQ(p.host, "nid00102");
}

TEST(MpitraceProfileReaderTest, LooksLikeMpitraceProfile) {
  EXPECT_TRUE(LooksLikeMpitraceProfile(Testdata("mpi_profile.1234.3")));
  EXPECT_TRUE(LooksLikeMpitraceProfile("\n  Data for MPI rank 2 of 8:\n"));
  EXPECT_FALSE(LooksLikeMpitraceProfile("[{\"ph\":\"X\"}]"));
  EXPECT_FALSE(LooksLikeMpitraceProfile("SQLite format 3"));
  EXPECT_FALSE(LooksLikeMpitraceProfile(""));
}

// Cut anywhere inside a row, a routine table or a distribution, the file
// is refused with the line.
TEST(MpitraceProfileReaderTest, RefusesTruncatedFiles) {
  const std::string text = Testdata("mpi_profile.1234.0");
  auto cut_after = [&](const std::string& what) {
    const size_t at = text.find(what);
    EXPECT_NE(at, std::string::npos) << what;
    return text.substr(0, at + what.size());
  };
  EXPECT_EQ(Error(cut_after("MPI_Bcast                              20")),
            "p:10: routine table row \"MPI_Bcast\" has 2 fields, not 4 (name, "
            "#calls, avg. bytes, time(sec)): cut short?");
  EXPECT_EQ(Error(cut_after("Data for MPI rank 0 of 4:\n")),
            "p: no routine table (\"MPI Routine  #calls  avg. bytes  "
            "time(sec)\"): cut short?");
  EXPECT_EQ(Error(cut_after("total elapsed time       = 12.345")),
            "p:16: total elapsed time: expected \"= VALUE UNIT\", found 1 "
            "words after \"=\"");
  EXPECT_EQ(Error(cut_after("       2       256.0")),
            "p:30: MPI_Bcast: size distribution row has 2 fields, not 3 "
            "(#calls, avg. bytes, time(sec)): cut short?");
  EXPECT_EQ(Error(cut_after("       2       256.0        0.002\n")),
            "p:28: the size distribution of MPI_Bcast counts 10 calls; the "
            "routine table says 20: cut short?");
  EXPECT_EQ(Error(cut_after("     2         nid00103      0       4.10")),
            "p:54: rank table row has 4 fields; its header has 9: cut short?");
  EXPECT_EQ(Error(cut_after("  median  communication time = 4.100 sec")),
            "p:46: expected \"median communication time = X sec for task T\": "
            "cut short?");
}

TEST(MpitraceProfileReaderTest, RefusesOtherFiles) {
  EXPECT_EQ(Error("[{\"ph\":\"X\",\"name\":\"a\"}]"),
            "p: not an mpitrace profile: no \"Data for MPI rank R of N:\" "
            "line");
  EXPECT_EQ(Error(""),
            "p: not an mpitrace profile: no \"Data for MPI rank R of N:\" "
            "line");
  EXPECT_EQ(Error("Message size distributions:\n"),
            "p:1: \"Message size distributions:\" before the \"Data for MPI "
            "rank\" line");
  const std::string text = Testdata("mpi_profile.1234.0");
  EXPECT_EQ(Error(text + text),
            "p:56: a second \"Data for MPI rank\" line: one file holds one "
            "rank's profile");
}

TEST(MpitraceProfileReaderTest, RefusesBadAndAbsurdValues) {
  const std::string text = Testdata("mpi_profile.1234.0");
  struct Case {
    const char* from;
    const char* to;
    const char* error;
  };
  const Case cases[] = {
      {"MPI_Barrier                             3",
       "MPI_Barrier                            -3",
       "p:11: MPI_Barrier: field \"#calls\": \"-3\" is negative"},
      {"MPI_Barrier                             3",
       "MPI_Barrier                           3.5",
       "p:11: MPI_Barrier: field \"#calls\": \"3.5\" is not a whole number"},
      {"MPI_Barrier                             3",
       "MPI_Barrier              9999999999999999",
       "p:11: MPI_Barrier: field \"#calls\": \"9999999999999999\" is over "
       "1000000000000000: an absurd value"},
      {"0.0        0.004", "0.0    99999999.999",
       "p:11: MPI_Barrier: field \"time(sec)\": \"99999999.999\" is over "
       "31536000: an absurd value"},
      {"0.0        0.004", "0.0         nan",
       "p:11: MPI_Barrier: field \"time(sec)\": \"nan\" is not a decimal "
       "number"},
      {"    10  67108864.0", "    10 9999999999999999.0",
       "p:36: MPI_Allreduce: field \"avg. bytes\": \"9999999999999999.0\" is "
       "over 1125899906842624: an absurd value"},
      {"rank 0 of 4:", "rank 5 of 4:",
       "p:1: field \"R\": \"5\" is not a rank of the 4 ranks"},
      {"rank 0 of 4:", "rank 0 of 0:",
       "p:1: field \"N\": \"0\" is not a number of ranks"},
      {"rank 0 of 4:", "rank 0 of many:",
       "p:1: field \"N\": \"many\" is not a whole number"},
      {"= 3.900 seconds.", "= 3.900 minutes.",
       "p:15: total communication time: field \"unit\": \"minutes.\" is not "
       "seconds"},
      {"system time              = 0.250 seconds.",
       "total elapsed time = 1.000 seconds.",
       "p:18: total elapsed time: given twice"},
      {"MPI_Barrier  ", "MPI_Bcast    ",
       "p:11: \"MPI_Bcast\" appears twice in the routine table"},
      {"MPI_Isend                          #calls",
       "MPI_Irecv                          #calls",
       "p:24: a size distribution of \"MPI_Irecv\", which the routine table "
       "does not list"},
      {"task 3\n", "task 4\n",
       "p:47: maximum: field \"task\": \"4\" is not a rank of the 4 ranks"},
      {"     3         nid00103", "     1         nid00103",
       "p:55: task 1 appears twice in the rank table"},
      {"taskid             host", "taskid             node",
       "p:51: the rank table has no column \"host\""},
      {"498.00        1305", "498.00       -1305",
       "p:55: task 3: field \"switches\": \"-1305\" is negative"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.to);
    ASSERT_NE(text.find(c.from), std::string::npos);
    std::string bad = text;
    bad.replace(bad.find(c.from), strlen(c.from), c.to);
    EXPECT_EQ(Error(bad), c.error);
  }
}

}  // namespace
}  // namespace meridian
