#include "cli/mpitrace_profile_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "import/mpitrace_profile_reader.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

constexpr int64_t kMs = 1000000;
constexpr int64_t kMiB = 1 << 20;

v1::OpStats* AddOp(v1::RankStats* rank, v1::Category category,
                   const std::string& name, int64_t calls, int64_t bytes,
                   int64_t dur_ns) {
  v1::OpStats* op = rank->add_ops();
  op->set_category(category);
  op->set_name(name);
  op->set_calls(calls);
  op->set_bytes(bytes);
  op->set_dur_ns(dur_ns);
  return op;
}

void AddBucket(v1::OpStats* op, int log2, int64_t calls, int64_t bytes,
               int64_t dur_ns) {
  v1::SizeBucket* b = op->add_buckets();
  b->set_log2(log2);
  b->set_calls(calls);
  b->set_bytes(bytes);
  b->set_dur_ns(dur_ns);
}

// Rank 0 and 1 captured, rank 2 only in an imported summary table, and a
// process without a rank.
v1::StatsReply ThreeRanks() {
  v1::StatsReply stats;
  stats.set_job("j");
  v1::RankStats* r0 = stats.add_ranks();
  r0->set_rank(0);
  r0->set_host("node a");
  r0->set_comm_ns(999 * kMs);  // with NCCL: not the file's
  r0->set_elapsed_ns(20000 * kMs);
  r0->set_mpi_elapsed_ns(19000 * kMs + 123456);
  r0->set_user_ns(18000 * kMs + 400000);
  r0->set_system_ns(700 * kMs);
  r0->set_max_rss_bytes(1177 * kMiB + 12345);
  r0->set_context_switches(634913);
  v1::OpStats* allreduce =
      AddOp(r0, v1::CATEGORY_MPI, "MPI_Allreduce", 4, 28 + 4096, 1500 * kMs);
  AddBucket(allreduce, 3, 3, 28, 500 * kMs + 1);
  AddBucket(allreduce, 12, 1, 4096, 1000 * kMs - 1);
  AddOp(r0, v1::CATEGORY_NCCL, "AllReduce", 9, 9000, 900 * kMs);
  v1::OpStats* barrier =
      AddOp(r0, v1::CATEGORY_MPI, "MPI_Barrier", 2, 0, 250 * kMs);
  AddBucket(barrier, -1, 2, 0, 250 * kMs);
  // Imported without a distribution: no rows for it.
  AddOp(r0, v1::CATEGORY_MPI, "MPI_Send", 5, 100, 50 * kMs);

  v1::RankStats* r1 = stats.add_ranks();
  r1->set_rank(1);
  r1->set_host("b");
  r1->set_elapsed_ns(21000 * kMs);  // no MPI_Init..MPI_Finalize
  v1::OpStats* isend = AddOp(r1, v1::CATEGORY_MPI, "MPI_Isend", 6,
                             1 + 7 + 3 * 2097151, 3 * kMs + 499999);
  AddBucket(isend, 0, 1, 1, kMs);
  AddBucket(isend, 1, 2, 7, kMs);
  AddBucket(isend, 20, 3, 3 * 2097151, kMs + 499999);

  v1::RankStats* r2 = stats.add_ranks();
  r2->set_rank(2);
  r2->set_host("c");
  r2->set_comm_ns(5000 * kMs);
  r2->set_elapsed_ns(22000 * kMs);
  r2->set_source("mpitrace");

  v1::RankStats* none = stats.add_ranks();
  none->set_rank(-1);
  return stats;
}

TEST(MpitraceProfileWriterTest, WritesMpitraceLayout) {
  v1::StatsReply stats;
  v1::RankStats* r = stats.add_ranks();
  r->set_rank(3);
  r->set_host("n1");
  r->set_mpi_elapsed_ns(12500 * kMs);
  r->set_user_ns(11900 * kMs);
  r->set_system_ns(400 * kMs);
  r->set_max_rss_bytes(100 * kMiB);
  r->set_context_switches(12);
  v1::OpStats* op =
      AddOp(r, v1::CATEGORY_MPI, "MPI_Allreduce", 120, 960, 31 * kMs);
  AddBucket(op, 3, 120, 960, 31 * kMs);
  const std::vector<MpitraceProfileText> profiles = MpitraceProfiles(stats, 4);
  ASSERT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles[0].rank, 3);
  EXPECT_EQ(profiles[0].file_name, "mpi_profile.3");
  const std::string dashes(71, '-');
  EXPECT_EQ(
      profiles[0].text,
      "Data for MPI rank 3 of 4:\n"
      "Times and statistics from MPI_Init() to MPI_Finalize().\n" +
          dashes +
          "\n"
          "MPI Routine                        #calls  avg. bytes    "
          "time(sec)\n" +
          dashes +
          "\n"
          "MPI_Allreduce                         120         8.0        "
          "0.031\n" +
          dashes +
          "\n"
          "MPI task 3 of 4 had the minimum communication time.\n"
          "MPI task 3 of 4 had the maximum communication time.\n"
          "MPI task 3 of 4 had the median communication time.\n"
          "total communication time = 0.031 seconds.\n"
          "total elapsed time = 12.500 seconds.\n"
          "user cpu time = 11.900 seconds.\n"
          "system time = 0.400 seconds.\n"
          "max resident set size = 100.000 MBytes.\n"
          "\n" +
          dashes +
          "\n"
          "Message size distributions:\n"
          "\n"
          "MPI_Allreduce                      #calls  avg. bytes    "
          "time(sec)\n"
          "                                      120         8.0        "
          "0.031\n"
          "\n" +
          dashes +
          "\n"
          "Communication summary for all tasks:\n"
          "\n"
          "  Rank 3 reported the largest memory utilization : 100.00 MBytes\n"
          "  Rank 3 reported the largest elapsed time : 12.50 sec\n"
          "\n"
          "  minimum communication time = 0.031 sec for task 3\n"
          "  median  communication time = 0.031 sec for task 3\n"
          "  maximum communication time = 0.031 sec for task 3\n"
          "\n"
          "MPI timing summary for all ranks:\n"
          "taskid hostname    comm(s) elapsed(s)    user(s)  system(s)   "
          "size(MB)   switches\n"
          "     3       n1       0.03      12.50      11.90       0.40     "
          "100.00         12\n");
}

void ExpectNear(int64_t read, int64_t written, int64_t within,
                const std::string& what) {
  EXPECT_LE(std::llabs(read - written), within)
      << what << ": read " << read << ", wrote " << written;
}

// Everything written reads back through `meridian import`'s reader to the
// same figures, within the file's rounding.
TEST(MpitraceProfileWriterTest, ImportReaderReadsItBack) {
  const v1::StatsReply stats = ThreeRanks();
  const std::vector<MpitraceProfileText> profiles = MpitraceProfiles(stats, 8);
  ASSERT_EQ(profiles.size(), 3u);  // not the rank -1
  // The files' communication times: MPI routines only (rank 2: its table
  // row's).
  const int64_t comm[] = {1800 * kMs, 3 * kMs + 499999, 5000 * kMs};
  const int64_t elapsed[] = {19000 * kMs + 123456, 21000 * kMs, 22000 * kMs};
  for (size_t i = 0; i < profiles.size(); ++i) {
    SCOPED_TRACE(profiles[i].file_name);
    const v1::RankStats& r = stats.ranks(static_cast<int>(i));
    auto read = ReadMpitraceProfile(profiles[i].text, profiles[i].file_name);
    ASSERT_TRUE(read.ok()) << read.status() << "\n" << profiles[i].text;
    EXPECT_EQ(read->rank, r.rank());
    EXPECT_EQ(read->world_size, 8);
    EXPECT_EQ(read->interval, "MPI_Init() to MPI_Finalize()");
    std::vector<const v1::OpStats*> mpi;
    for (const v1::OpStats& op : r.ops()) {
      if (op.category() == v1::CATEGORY_MPI) mpi.push_back(&op);
    }
    ASSERT_EQ(read->routines.size(), mpi.size());
    for (size_t k = 0; k < mpi.size(); ++k) {
      const v1::OpStats& op = *mpi[k];
      const MpitraceRoutine& routine = read->routines[k];
      EXPECT_EQ(routine.name, op.name());
      EXPECT_EQ(routine.calls, op.calls());
      ExpectNear(routine.bytes, op.bytes(), (op.calls() + 1) / 2 + 1,
                 op.name() + " bytes");  // 0.05 B a call, and rounding
      ExpectNear(routine.time_ns, op.dur_ns(), 500000, op.name() + " time");
      const bool distributed = op.bytes() > 0 && op.name() != "MPI_Send";
      ASSERT_EQ(routine.buckets.size(), distributed ? op.buckets_size() : 0);
      for (size_t b = 0; b < routine.buckets.size(); ++b) {
        const v1::SizeBucket& bucket = op.buckets(static_cast<int>(b));
        EXPECT_EQ(routine.buckets[b].log2, bucket.log2());
        EXPECT_EQ(routine.buckets[b].calls, bucket.calls());
        ExpectNear(routine.buckets[b].bytes, bucket.bytes(),
                   (bucket.calls() + 1) / 2 + 1, op.name() + " bucket bytes");
        ExpectNear(routine.buckets[b].time_ns, bucket.dur_ns(), 500000,
                   op.name() + " bucket time");
      }
    }
    ASSERT_TRUE(read->comm_ns && read->elapsed_ns && read->user_ns &&
                read->system_ns && read->max_rss_bytes);
    ExpectNear(*read->comm_ns, comm[i], 500000, "comm");
    ExpectNear(*read->elapsed_ns, elapsed[i], 500000, "elapsed");
    ExpectNear(*read->user_ns, r.user_ns(), 500000, "user");
    ExpectNear(*read->system_ns, r.system_ns(), 500000, "system");
    ExpectNear(*read->max_rss_bytes, r.max_rss_bytes(), kMiB / 2000 + 1,
               "max rss");
  }
  // Rank 1 < rank 0 < rank 2.
  auto r0 = ReadMpitraceProfile(profiles[0].text, "0");
  auto r1 = ReadMpitraceProfile(profiles[1].text, "1");
  auto r2 = ReadMpitraceProfile(profiles[2].text, "2");
  ASSERT_TRUE(r0.ok() && r1.ok() && r2.ok());
  EXPECT_EQ(r0->comm_time_roles, std::vector<std::string>{"median"});
  EXPECT_EQ(r1->comm_time_roles, std::vector<std::string>{"minimum"});
  EXPECT_EQ(r2->comm_time_roles, std::vector<std::string>{"maximum"});
  EXPECT_EQ(r0->min_comm_rank, 1);
  EXPECT_EQ(r0->median_comm_rank, 0);
  EXPECT_EQ(r0->max_comm_rank, 2);
  EXPECT_FALSE(r1->min_comm_rank.has_value());  // rank 0's file only
  EXPECT_TRUE(r1->ranks.empty());
  ASSERT_EQ(r0->ranks.size(), 3u);
  EXPECT_EQ(r0->host, "node_a");
  const char* hosts[] = {"node_a", "b", "c"};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const MpitraceRankTotals& row = r0->ranks[i];
    const v1::RankStats& r = stats.ranks(static_cast<int>(i));
    EXPECT_EQ(row.rank, r.rank());
    EXPECT_EQ(row.host, hosts[i]);
    ExpectNear(row.comm_ns, comm[i], 5 * kMs, "comm");
    ExpectNear(row.elapsed_ns, elapsed[i], 5 * kMs, "elapsed");
    ASSERT_TRUE(row.user_ns && row.system_ns && row.max_rss_bytes);
    ExpectNear(*row.user_ns, r.user_ns(), 5 * kMs, "user");
    ExpectNear(*row.system_ns, r.system_ns(), 5 * kMs, "system");
    ExpectNear(*row.max_rss_bytes, r.max_rss_bytes(), kMiB / 200 + 1, "rss");
  }
}

TEST(MpitraceProfileWriterTest, WorldSizeCoversTheRanks) {
  const std::vector<MpitraceProfileText> profiles =
      MpitraceProfiles(ThreeRanks(), 0);
  ASSERT_EQ(profiles.size(), 3u);
  EXPECT_EQ(profiles[2].text.substr(0, 26), "Data for MPI rank 2 of 3:\n");
  EXPECT_TRUE(MpitraceProfiles(v1::StatsReply(), 4).empty());
}

// A rank that called MPI_Pcontrol was recorded in windows: mpitrace's
// summary_start()..summary_stop() header.
TEST(MpitraceProfileWriterTest, PcontrolWindowsSayWhatWasCounted) {
  v1::StatsReply stats = ThreeRanks();
  stats.mutable_ranks(1)->set_pcontrol_windows(true);
  const std::vector<MpitraceProfileText> profiles = MpitraceProfiles(stats, 0);
  ASSERT_EQ(profiles.size(), 3u);
  const std::string windows =
      "Times and statistics from summary_start() to summary_stop().\n";
  const std::string whole =
      "Times and statistics from MPI_Init() to MPI_Finalize().\n";
  EXPECT_NE(profiles[1].text.find(windows), std::string::npos);
  EXPECT_EQ(profiles[1].text.find(whole), std::string::npos);
  EXPECT_NE(profiles[0].text.find(whole), std::string::npos);
}

std::string TempDir(const std::string& name) {
  const char* base = getenv("TEST_TMPDIR");
  return std::string(base != nullptr ? base : "/tmp") + "/" + name;
}

TEST(MpitraceProfileWriterTest, CreatesTheDirectoryAndWritesEachRank) {
  const std::string dir = TempDir("profiles");
  const v1::StatsReply stats = ThreeRanks();
  auto written = WriteMpitraceProfiles(stats, 8, dir);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, 3);
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const std::vector<MpitraceProfileText> profiles = MpitraceProfiles(stats, 8);
  for (const MpitraceProfileText& p : profiles) {
    EXPECT_EQ(FileText(dir + "/" + p.file_name), p.text) << p.file_name;
  }
  // Again: every name exists, nothing is replaced.
  auto again = WriteMpitraceProfiles(stats, 4, dir);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(again.status().message(),
            dir +
                "/mpi_profile.0 exists; meridian stats --mpitrace never "
                "replaces a file: remove it or give another directory");
  EXPECT_EQ(FileText(dir + "/mpi_profile.0"), profiles[0].text);
}

TEST(MpitraceProfileWriterTest, WritesIntoAnExistingDirectory) {
  const std::string dir = TempDir("existing");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  auto written = WriteMpitraceProfiles(ThreeRanks(), 8, dir);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, 3);
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);  // left as it was
}

// A link planted under one of the names is refused, not followed, and no
// file is written.
TEST(MpitraceProfileWriterTest, NeverFollowsALink) {
  const std::string dir = TempDir("trap");
  const std::string target = TempDir("target");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  { std::ofstream(target) << "theirs"; }
  ASSERT_EQ(symlink(target.c_str(), (dir + "/mpi_profile.2").c_str()), 0);
  auto written = WriteMpitraceProfiles(ThreeRanks(), 8, dir);
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FileText(target), "theirs");
  struct stat st;
  EXPECT_NE(lstat((dir + "/mpi_profile.0").c_str(), &st), 0);
  EXPECT_NE(lstat((dir + "/mpi_profile.1").c_str(), &st), 0);
}

TEST(MpitraceProfileWriterTest, RefusesAFileForTheDirectory) {
  const std::string path = TempDir("a_file");
  { std::ofstream(path) << "x"; }
  auto written = WriteMpitraceProfiles(ThreeRanks(), 8, path);
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(written.status().message(),
            path +
                " exists and is not a directory: give --mpitrace a "
                "directory");
  auto nested = WriteMpitraceProfiles(ThreeRanks(), 8, path + "/sub");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace meridian
