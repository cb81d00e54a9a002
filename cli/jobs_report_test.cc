#include "cli/jobs_report.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::ListJobsReply TwoJobs() {
  v1::ListJobsReply reply;
  v1::JobSummary* done = reply.add_jobs();
  done->set_job("cli");
  done->set_ranks(2);
  done->set_nodes(1);
  done->set_spans(26);
  done->set_start_ns(1700000000000000000 - 1000000);
  done->set_end_ns(1700000000000000000 + 19000000);
  v1::JobSummary* lost = reply.add_jobs();
  lost->set_job("train \"a\"");
  lost->set_ranks(3);
  lost->set_world_size(4);
  lost->set_incomplete(true);
  lost->set_nodes(2);
  lost->set_spans(1200);
  lost->set_spans_dropped(171503);
  lost->set_start_ns(1700000000000000001);  // shown to the ns
  lost->set_end_ns(1700000001500000000);
  lost->set_health("stalled");  // its processes report, stuck
  return reply;
}

TEST(JobsReportTest,
     TextShowsRanksSeenOfExpectedAndFlagsIncompleteJobsAndDroppedSpans) {
  EXPECT_EQ(
      JobsText(TwoJobs()),
      "JOB                       RANKS  NODES        SPANS  START (UTC)        "
      "                DURATION(s)\n"
      "cli                           2      1           26  "
      "2023-11-14T22:13:19.999000000Z     0.020000000\n"
      "train \"a\"                   3/4      2         1200  "
      "2023-11-14T22:13:20.000000001Z     1.499999999  stalled (meridian "
      "health --job train \"a\")  incomplete: 3 of 4 "
      "ranks seen  171503 spans dropped (full rings: missing from the "
      "timeline)\n");
  EXPECT_EQ(JobsText(v1::ListJobsReply()), "no jobs stored yet\n");
}

// A name wider than the column widens it: every row's columns stay
// aligned under the header.
TEST(JobsReportTest, AWideNameWidensTheColumn) {
  v1::ListJobsReply reply = TwoJobs();
  reply.mutable_jobs(0)->set_job("resnet50-ddp-8x8-2026-12-02-run3");  // 32
  EXPECT_EQ(JobsText(reply),
            "JOB                               RANKS  NODES        SPANS  "
            "START (UTC)                        DURATION(s)\n"
            "resnet50-ddp-8x8-2026-12-02-run3      2      1           26  "
            "2023-11-14T22:13:19.999000000Z     0.020000000\n"
            "train \"a\"                           3/4      2         1200  "
            "2023-11-14T22:13:20.000000001Z     1.499999999  stalled (meridian "
            "health --job train \"a\")  incomplete: 3 of "
            "4 ranks seen  171503 spans dropped (full rings: missing from the "
            "timeline)\n");
}

TEST(JobsReportTest, Json) {
  EXPECT_EQ(JobsJson(TwoJobs()),
            "{\"jobs\":[{\"job\":\"cli\",\"ranks_seen\":2,\"world_size\":0,"
            "\"incomplete\":false,\"nodes\":1,\"spans\":26,\"spans_dropped\":0,"
            "\"start_ns\":1699999999999000000,\"end_ns\":1700000000019000000,"
            "\"health\":\"\"},"
            "{\"job\":\"train \\\"a\\\"\",\"ranks_seen\":3,\"world_size\":4,"
            "\"incomplete\":true,\"nodes\":2,\"spans\":1200,"
            "\"spans_dropped\":171503,"
            "\"start_ns\":1700000000000000001,"
            "\"end_ns\":1700000001500000000,\"health\":\"stalled\"}]}\n");
  EXPECT_EQ(JobsJson(v1::ListJobsReply()), "{\"jobs\":[]}\n");
}

}  // namespace
}  // namespace meridian
