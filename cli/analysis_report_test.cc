#include "cli/analysis_report.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::CriticalPathReply Path() {
  v1::CriticalPathReply path;
  path.set_job("j");
  path.set_step(3);
  path.set_start_ns(1000000);
  path.set_dur_ns(2000000);
  path.set_compute_ns(1500000);
  path.set_untraced_ns(500000);
  path.set_explained(0.7500000000000001);  // not rounded to 6 digits
  v1::PathSegment* s = path.add_segments();
  s->set_rank(2);
  s->set_time_class(v1::TIME_CLASS_COMPUTE);
  s->set_category(v1::CATEGORY_USER);
  s->set_name("forward");
  s->set_track("main");
  s->set_start_ns(1000000);
  s->set_dur_ns(1500000);
  s = path.add_segments();
  s->set_rank(0);
  s->set_time_class(v1::TIME_CLASS_UNTRACED);
  s->set_track("main");
  s->set_start_ns(2500000);
  s->set_dur_ns(500000);
  s->set_peer(1);
  v1::RankTime* r = path.add_ranks();
  r->set_rank(2);
  r->set_dur_ns(1500000);
  return path;
}

TEST(AnalysisReportTest, CriticalPathJsonHasIntegerRanksAndDurations) {
  EXPECT_EQ(CriticalPathJson(Path()),
            "{\"job\":\"j\",\"step\":3,\"start_ns\":1000000,\"dur_ns\":2000000,"
            "\"compute_ns\":1500000,\"communication_ns\":0,\"waiting_ns\":0,"
            "\"setup_ns\":0,\"untraced_ns\":500000,\"explained\":0."
            "7500000000000001,\"segments\":["
            "{\"rank\":2,\"class\":\"compute\",\"category\":\"user\",\"name\":"
            "\"forward\",\"track\":\"main\",\"start_ns\":1000000,\"dur_ns\":"
            "1500000},"
            "{\"rank\":0,\"class\":\"untraced\",\"category\":\"none\",\"name\":"
            "\"\",\"track\":\"main\",\"start_ns\":2500000,\"dur_ns\":500000,"
            "\"peer\":1}],\"ranks\":[{\"rank\":2,\"dur_ns\":1500000}]}\n");
}

TEST(AnalysisReportTest, CriticalPathText) {
  EXPECT_EQ(CriticalPathText(Path()),
            "Critical path of job j, step 3: 2.000 ms\n"
            "(Times in ms, rounded to the µs; percentages to 0.1 %. --json "
            "gives exact ns.)\n\n"
            "    at(ms)    dur(ms)  rank  class          category      name\n"
            "     0.000      1.500     2  compute        user          "
            "forward [main]\n"
            "     1.500      0.500     0  untraced       -             "
            "(untraced) (from rank 1) [main]\n"
            "\nBreakdown: compute 1.500 ms (75.0%), communication 0.000 ms "
            "(0.0%), waiting 0.000 ms (0.0%), set-up 0.000 ms (0.0%), untraced "
            "0.500 ms (25.0%)\n"
            "Explained: 75.0% of the step is in traced spans.\n"
            "On the path per rank: rank 2 1.500 ms\n");
}

// Jobs "job x" and "job y": MPI_Bcast called twice in x.
v1::CompareReply BcastCompare() {
  v1::CompareReply compare;
  compare.set_a("job x");
  compare.set_b("job y");
  compare.set_ops_total(1);
  v1::OpDiff* op = compare.add_ops();
  op->set_category(v1::CATEGORY_MPI);
  op->set_name("MPI_Bcast");
  op->mutable_a()->set_count(2);
  return compare;
}

TEST(AnalysisReportTest, StragglersAndCompareJson) {
  v1::StragglersReply stragglers;
  stragglers.set_job("j");
  stragglers.set_instances(1);
  v1::RankWait* w = stragglers.add_ranks();
  w->set_rank(2);
  w->set_wait_ns(6);
  w->set_collective_wait_ns(6);
  w->set_instances_last(1);
  v1::CollectiveInstance* c = stragglers.add_collectives();
  c->set_name("MPI_Allreduce");
  c->set_comm(0xab);
  c->set_seq(1);
  c->set_ranks(4);
  c->set_skew_ns(2);
  c->set_last_rank(2);
  c->set_wait_ns(6);
  EXPECT_EQ(StragglersJson(stragglers),
            "{\"job\":\"j\",\"instances\":1,\"messages\":0,\"from_summaries\":"
            "false,\"ranks\":[{"
            "\"rank\":2,\"wait_ns\":6,\"collective_wait_ns\":6,"
            "\"late_sender_wait_ns\":0,\"instances_last\":1,\"waited_ns\":0}],"
            "\"collectives\":[{\"name\":\"MPI_Allreduce\",\"comm\":\"0xab\","
            "\"seq\":1,\"ranks\":4,\"start_ns\":0,\"skew_ns\":2,"
            "\"last_rank\":2,\"wait_ns\":6}]}\n");

  v1::CompareReply compare = BcastCompare();
  v1::OpDiff* op = compare.mutable_ops(0);
  op->mutable_diff()->set_count(-2);
  EXPECT_EQ(CompareJson(compare),
            "{\"a\":\"job x\",\"b\":\"job y\",\"ops_total\":1,\"total\":{"
            "\"a\":{\"count\":0,\"dur_ns\":0,\"bytes\":0},\"b\":{\"count\":0,"
            "\"dur_ns\":0,\"bytes\":0}},\"ops\":[{\"category\":\"mpi\","
            "\"name\":\"MPI_Bcast\",\"a\":{\"count\":2,\"dur_ns\":0,\"bytes\":"
            "0},\"b\":{\"count\":0,\"dur_ns\":0,\"bytes\":0},\"diff\":{"
            "\"count\":-2,\"dur_ns\":0,\"bytes\":0}}]}\n");
}

// The text shows A, B and B - A of counts, times and bytes, as the docs
// say; a difference that rounds to 0 has no sign.
TEST(AnalysisReportTest, CompareTextShowsBothSidesAndTheirDifference) {
  v1::CompareReply compare = BcastCompare();
  v1::OpDiff* op = compare.mutable_ops(0);
  op->mutable_a()->set_dur_ns(3000400);
  op->mutable_a()->set_bytes(64);
  op->mutable_b()->set_count(2);
  op->mutable_b()->set_dur_ns(3000000);
  op->mutable_b()->set_bytes(96);
  op->mutable_diff()->set_dur_ns(-400);
  op->mutable_diff()->set_bytes(32);
  *compare.mutable_total_a() = op->a();
  *compare.mutable_total_b() = op->b();
  EXPECT_EQ(
      CompareText(compare),
      "A: job x\nB: job y\n(diff = B - A; time in ms, rounded to the µs; "
      "--json gives exact ns)\n\n"
      "operation                    category       count A   count B      "
      "diff       time A       time B         diff        bytes A        "
      "bytes B           diff\n"
      "MPI_Bcast                    mpi                  2         2        "
      "+0        3.000        3.000        0.000             64             "
      "96            +32\n"
      "(all operations)                                  2         2        "
      "+0        3.000        3.000        0.000             64             "
      "96            +32\n");
}

// A set-up column only where a step holds set-up (MPI_Init in a step).
TEST(AnalysisReportTest, StepsTextShowsSetUpWhereAStepHasIt) {
  v1::StepsReply reply;
  reply.set_job("j");
  v1::StepSummary* step = reply.add_steps();
  step->set_step(0);
  step->set_start_ns(1000000);
  step->set_dur_ns(6000000);
  step->set_compute_ns(2000000);
  step->set_communication_ns(1000000);
  v1::RankStep* rank = step->add_ranks();
  rank->set_rank(0);
  rank->set_dur_ns(6000000);
  rank->set_compute_ns(2000000);
  rank->set_communication_ns(1000000);
  const std::string plain = StepsText(reply);
  EXPECT_EQ(plain.find("set-up"), std::string::npos) << plain;
  step->set_setup_ns(3000000);
  rank->set_setup_ns(3000000);
  EXPECT_EQ(StepsText(reply),
            "Steps of job j (compute, communication, set-up (MPI_Init, "
            "MPI_Finalize) and overlap: means over the ranks; start: from the "
            "first step's)\n"
            "(Times in ms, rounded to the µs; percentages to 0.1 %. --json "
            "gives exact ns.)\n"
            "    step       iter      start  slowest    compute       comm    "
            "overlap     set-up\n"
            "       0      6.000      0.000        0      2.000      1.000    "
            "  0.000      3.000\n"
            "\nPer step and rank (ms):\n"
            "    step   rank       iter    compute       comm    overlap     "
            "set-up\n"
            "       0      0      6.000      2.000      1.000      0.000      "
            "3.000\n");
  EXPECT_NE(StepsJson(reply).find("\"overlap_ns\":0,\"setup_ns\":3000000"),
            std::string::npos);
}

}  // namespace
}  // namespace meridian
