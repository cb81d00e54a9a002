#include "cli/stats_report.h"

#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kMs = 1000000;

v1::StatsReply TwoRanks() {
  v1::StatsReply stats;
  stats.set_job("j");
  stats.set_elapsed_ns(3000 * kMs);
  v1::OpStats* op = stats.add_ops();
  op->set_category(v1::CATEGORY_MPI);
  op->set_name("MPI_Allreduce");
  op->set_calls(2);
  op->set_bytes(16);
  op->set_dur_ns(30 * kMs);
  v1::SizeBucket* b = op->add_buckets();
  b->set_log2(3);
  b->set_calls(2);
  b->set_bytes(16);
  b->set_dur_ns(30 * kMs);
  v1::RankStats* r0 = stats.add_ranks();
  r0->set_rank(0);
  r0->set_host("a");
  r0->set_calls(1);
  r0->set_comm_ns(10 * kMs);
  r0->set_elapsed_ns(3000 * kMs);
  r0->set_mpi_elapsed_ns(2500 * kMs);
  r0->set_user_ns(2000 * kMs);
  r0->set_system_ns(250 * kMs);
  r0->set_max_rss_bytes(300 << 20);
  r0->set_context_switches(77);
  *r0->add_ops() = *op;
  v1::RankStats* r1 = stats.add_ranks();
  r1->set_rank(1);
  r1->set_host("b");
  r1->set_calls(1);
  r1->set_comm_ns(20 * kMs);
  r1->set_elapsed_ns(2900 * kMs);  // no MPI_Init..MPI_Finalize
  r1->set_max_rss_bytes(600 << 20);
  stats.set_min_comm_rank(0);
  stats.set_median_comm_rank(0);
  stats.set_max_comm_rank(1);
  return stats;
}

TEST(StatsReportTest, TextHasTheRanksResourceUse) {
  EXPECT_EQ(
      StatsText(TwoRanks()),
      "Job j: 2 ranks. Communication (MPI, NCCL, c10d) summed over all ranks.\n"
      "Time is time inside the calls (c10d: from the call to its work's end): "
      "a non-blocking call's completion time "
      "is counted in the MPI_Wait* (or MPI_Test*) that completes it.\n"
      "(Times in seconds, rounded to the µs, user and system time to the "
      "ms; average bytes to 0.1; size(MB) in MiB (2^20 bytes) to 0.001, in "
      "the lines naming the largest rank to 0.01. --json gives exact "
      "integers.)\n"
      "\n"
      "Operation                          #calls       avg. bytes    "
      "time(sec)\n"
      "MPI_Allreduce                           2              8.0     "
      "0.030000\n"
      "\n"
      "Message size distributions:\n"
      "MPI_Allreduce                      #calls       avg. bytes    "
      "time(sec)\n"
      "  [8, 16)                               2              8.0     "
      "0.030000\n"
      "\n"
      "Communication per rank (elapsed: MPI_Init to MPI_Finalize, as "
      "mpitrace; traced: first span to last; -: not known):\n"
      "  rank  host                     #calls      comm(s)   elapsed(s)    "
      "traced(s)    user(s)  system(s)   size(MB)   switches  source\n"
      "     0  a                             1     0.010000     2.500000     "
      "3.000000      2.000      0.250    300.000         77  spans\n"
      "     1  b                             1     0.020000            -     "
      "2.900000      0.000      0.000    600.000          0  spans\n"
      "\n"
      "Rank 1 reported the largest memory utilization : 600.00 MBytes\n"
      "Rank 0 reported the largest elapsed time : 2.50 sec\n"
      "\n"
      "minimum communication time = 0.010000 sec for rank 0\n"
      "median communication time = 0.010000 sec for rank 0\n"
      "maximum communication time = 0.020000 sec for rank 1\n"
      "traced time = 3.000000 seconds (the job's first selected span to its "
      "last).\n");
}

// A rank that sent no resource use, or a window without MPI_Init and
// MPI_Finalize (--steps, --from/--to): "-", not a measured 0, and no line
// naming a largest rank of what no rank has.
TEST(StatsReportTest, FiguresNotKnownAreDashesAndNameNoLargestRank) {
  v1::StatsReply stats;
  v1::RankStats* r = stats.add_ranks();
  r->set_rank(0);
  r->set_host("a");
  r->set_elapsed_ns(kMs);
  const std::string text = StatsText(stats);
  EXPECT_NE(
      text.find("     0  a                             0     0.000000     "
                "       -     0.001000          -          -          -  "
                "        -  spans\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("largest memory"), std::string::npos) << text;
  EXPECT_EQ(text.find("largest elapsed"), std::string::npos) << text;
  // No operation: said, before the empty table.
  EXPECT_NE(text.find("\n\nNo communication (MPI or NCCL) in the selection. "
                      "torch.distributed's own collectives (gloo, MPI or UCC "
                      "backends) are not captured: docs/launchers.md.\n\n"
                      "Operation "),
            std::string::npos)
      << text;
  EXPECT_EQ(StatsText(TwoRanks()).find("No communication"), std::string::npos);
}

// Spans lost to full rings are said before the figures they are missing
// from, per rank, and in the JSON.
TEST(StatsReportTest, SaysWhatFullRingsDroppedFirst) {
  v1::StatsReply stats = TwoRanks();
  stats.mutable_ranks(1)->set_spans_dropped(171503);
  stats.set_spans_dropped(171503);
  const std::string text = StatsText(stats);
  EXPECT_NE(text.find("integers.)\n\n171503 spans were dropped by full rings "
                      "and are missing from these figures: rank 1 171503.\n\n"
                      "Operation"),
            std::string::npos)
      << text;
  const std::string json = StatsJson(stats);
  EXPECT_NE(json.find("\"elapsed_ns\":3000000000,\"spans_dropped\":171503,"),
            std::string::npos);
  EXPECT_NE(json.find("\"mpi_elapsed_ns\":0,\"spans_dropped\":171503}"),
            std::string::npos)
      << json;
  EXPECT_EQ(StatsText(TwoRanks()).find("dropped"), std::string::npos);
}

TEST(StatsReportTest, JsonHasTheRanksFiguresAndOperations) {
  EXPECT_EQ(
      StatsJson(TwoRanks()),
      "{\"job\":\"j\",\"elapsed_ns\":3000000000,\"spans_dropped\":0,\"ops\":[{"
      "\"name\":"
      "\"MPI_Allreduce\",\"category\":\"mpi\",\"calls\":2,\"bytes\":16,"
      "\"dur_ns\":30000000,\"buckets\":[{\"log2\":3,\"calls\":2,\"bytes\":16,"
      "\"dur_ns\":30000000}]}],\"ranks\":[{\"rank\":0,\"host\":\"a\","
      "\"calls\":1,\"comm_ns\":10000000,\"elapsed_ns\":3000000000,"
      "\"source\":\"spans\",\"user_ns\":2000000000,\"system_ns\":250000000,"
      "\"max_rss_bytes\":314572800,\"context_switches\":77,"
      "\"mpi_elapsed_ns\":2500000000,\"spans_dropped\":0,\"ops\":[{\"name\":"
      "\"MPI_Allreduce\","
      "\"category\":\"mpi\",\"calls\":2,\"bytes\":16,\"dur_ns\":30000000,"
      "\"buckets\":[{\"log2\":3,\"calls\":2,\"bytes\":16,\"dur_ns\":30000000}"
      "]}]},{\"rank\":1,\"host\":\"b\",\"calls\":1,\"comm_ns\":20000000,"
      "\"elapsed_ns\":2900000000,\"source\":\"spans\",\"user_ns\":0,"
      "\"system_ns\":0,\"max_rss_bytes\":629145600,\"context_switches\":0,"
      "\"mpi_elapsed_ns\":0,\"spans_dropped\":0}],\"min_comm_rank\":0,\"median_"
      "comm_rank\":0,"
      "\"max_comm_rank\":1}\n");
}

// One operation from two call sites.
v1::StatsReply WithCallsites() {
  v1::StatsReply stats;
  stats.set_job("j");
  stats.set_elapsed_ns(kMs);
  v1::OpStats* op = stats.add_ops();
  op->set_category(v1::CATEGORY_MPI);
  op->set_name("MPI_Send");
  op->set_calls(3);
  op->set_bytes(48);
  op->set_dur_ns(3 * kMs);
  v1::CallsiteStats* a = stats.add_callsites();
  a->set_category(v1::CATEGORY_MPI);
  a->set_name("MPI_Send");
  a->set_callsite("main at tests/mpi_coverage.cc:57");
  a->set_calls(2);
  a->set_bytes(16);
  a->set_dur_ns(2 * kMs);
  v1::CallsiteStats* b = stats.add_callsites();
  b->set_category(v1::CATEGORY_MPI);
  b->set_name("MPI_Send");
  b->set_callsite("solve+0x1c in \"libfoo\".so");
  b->set_calls(1);
  b->set_bytes(32);
  b->set_dur_ns(kMs);
  return stats;
}

// stats --mpitrace: the distributions are in mpitrace's bins, and say so.
TEST(StatsReportTest, MpitraceBinsAreLabelledAsMpitraceHasThem) {
  v1::StatsReply stats = TwoRanks();
  stats.set_mpitrace_bins(true);
  v1::OpStats* op = stats.mutable_ops(0);
  op->mutable_buckets(0)->set_log2(2);  // the 8-byte calls: (4, 8]
  v1::SizeBucket* small = op->add_buckets();
  small->set_log2(1);
  small->set_calls(1);
  small->set_bytes(4);
  const std::string text = StatsText(stats);
  EXPECT_NE(text.find("\n  (4, 8]                                2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  [1, 4]                                1"),
            std::string::npos)
      << text;
  EXPECT_NE(StatsJson(stats).find(",\"mpitrace_bins\":true,\"ops\":["),
            std::string::npos);
  EXPECT_EQ(StatsJson(TwoRanks()).find("mpitrace_bins"), std::string::npos);
}

TEST(StatsReportTest, TextHasCallsitesAfterTheOperations) {
  EXPECT_EQ(
      StatsText(WithCallsites(), /*by_callsite=*/true),
      "Job j: 0 ranks. Communication (MPI, NCCL, c10d) summed over all ranks.\n"
      "Time is time inside the calls (c10d: from the call to its work's end): "
      "a non-blocking call's completion time "
      "is counted in the MPI_Wait* (or MPI_Test*) that completes it.\n"
      "(Times in seconds, rounded to the µs, user and system time to the "
      "ms; average bytes to 0.1; size(MB) in MiB (2^20 bytes) to 0.001, in "
      "the lines naming the largest rank to 0.01. --json gives exact "
      "integers.)\n"
      "\n"
      "Operation                          #calls       avg. bytes    "
      "time(sec)\n"
      "MPI_Send                                3             16.0     "
      "0.003000\n"
      "\n"
      "Call sites:\n"
      "Call                               #calls       avg. bytes    "
      "time(sec)  call site\n"
      "MPI_Send                                2              8.0     "
      "0.002000  main at tests/mpi_coverage.cc:57\n"
      "MPI_Send                                1             32.0     "
      "0.001000  solve+0x1c in \"libfoo\".so\n"
      "\n"
      "Message size distributions:\n"
      "MPI_Send                           #calls       avg. bytes    "
      "time(sec)\n"
      "\n"
      "Communication per rank (elapsed: MPI_Init to MPI_Finalize, as "
      "mpitrace; traced: first span to last; -: not known):\n"
      "  rank  host                     #calls      comm(s)   elapsed(s)    "
      "traced(s)    user(s)  system(s)   size(MB)   switches  source\n"
      "traced time = 0.001000 seconds (the job's first selected span to its "
      "last).\n");
  // Not asked: not shown.
  EXPECT_EQ(StatsText(WithCallsites()).find("Call sites"), std::string::npos);
}

TEST(StatsReportTest, TextSaysWhenNoCallsiteWasRecorded) {
  v1::StatsReply stats = WithCallsites();
  stats.clear_callsites();
  const std::string text = StatsText(stats, /*by_callsite=*/true);
  EXPECT_NE(text.find("0.003000\n"
                      "\n"
                      "Call sites: none recorded; run the job with "
                      "MERIDIAN_CALLSITES=1 to record them.\n"
                      "\n"
                      "Message size distributions:\n"),
            std::string::npos)
      << text;
}

TEST(StatsReportTest, JsonHasCallsitesAfterTheOperations) {
  const std::string ops =
      "{\"job\":\"j\",\"elapsed_ns\":1000000,\"spans_dropped\":0,\"ops\":[{"
      "\"name\":\"MPI_Send\","
      "\"category\":\"mpi\",\"calls\":3,\"bytes\":48,\"dur_ns\":3000000,"
      "\"buckets\":[]}]";
  const std::string ranks =
      ",\"ranks\":[],\"min_comm_rank\":0,\"median_comm_rank\":0,"
      "\"max_comm_rank\":0}\n";
  EXPECT_EQ(StatsJson(WithCallsites(), /*by_callsite=*/true),
            ops +
                ",\"callsites\":[{\"name\":\"MPI_Send\",\"category\":\"mpi\","
                "\"callsite\":\"main at tests/mpi_coverage.cc:57\","
                "\"calls\":2,\"bytes\":16,\"dur_ns\":2000000},"
                "{\"name\":\"MPI_Send\",\"category\":\"mpi\","
                "\"callsite\":\"solve+0x1c in \\\"libfoo\\\".so\","
                "\"calls\":1,\"bytes\":32,\"dur_ns\":1000000}]" +
                ranks);
  v1::StatsReply none = WithCallsites();
  none.clear_callsites();
  EXPECT_EQ(StatsJson(none, /*by_callsite=*/true),
            ops + ",\"callsites\":[]" + ranks);
  EXPECT_EQ(StatsJson(WithCallsites()), ops + ranks);
}

}  // namespace
}  // namespace meridian
