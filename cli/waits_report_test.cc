#include "cli/waits_report.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::WaitsReply Reply() {
  v1::WaitsReply reply;
  reply.set_job("j");
  v1::WaitPattern* p = reply.add_patterns();
  p->set_pattern("late_sender");
  p->set_rank(3);
  p->set_wait_ns(3100000);
  p->set_instances(1);
  for (auto [rank, ns] : {std::pair{1, 1050000}, std::pair{0, 1000000}}) {
    v1::WaitCause* c = p->add_caused_by();
    c->set_rank(rank);
    c->set_doing("compute");
    c->set_ns(ns);
  }
  p = reply.add_patterns();
  p->set_pattern("wait_at_nxn");
  p->set_rank(0);
  p->set_step(4);
  p->set_wait_ns(2000);
  p->set_instances(2);
  v1::RankWaitCost* r = reply.add_ranks();
  r->set_rank(0);
  r->set_short_term_ns(1000000);
  r->set_long_term_ns(2000000);
  return reply;
}

TEST(WaitsReportTest, Json) {
  EXPECT_EQ(WaitsJson(Reply()),
            "{\"job\":\"j\",\"patterns\":[{\"pattern\":\"late_sender\","
            "\"rank\":3,\"wait_ns\":3100000,\"instances\":1,\"caused_by\":["
            "{\"rank\":1,\"in\":\"compute\",\"ns\":1050000},{\"rank\":0,"
            "\"in\":\"compute\",\"ns\":1000000}]},{\"pattern\":\"wait_at_nxn\","
            "\"rank\":0,\"step\":4,\"wait_ns\":2000,\"instances\":2,"
            "\"caused_by\":[]}],\"ranks\":[{\"rank\":0,\"wait_ns\":0,"
            "\"short_term_ns\":1000000,\"long_term_ns\":2000000}]}\n");
}

TEST(WaitsReportTest, Text) {
  const std::string text = WaitsText(Reply());
  EXPECT_NE(text.find("late_sender           3    all        3.100         1"
                      "  rank 1 in compute 1.050, rank 0 in compute 1.000\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("wait_at_nxn           0      4        0.002         2"
                      "  \n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    0        0.000           1.000          2.000\n"),
            std::string::npos)
      << text;
  v1::WaitsReply none;
  none.set_job("quiet");
  EXPECT_NE(WaitsText(none).find("No rank waited for another.\n"),
            std::string::npos);
}

TEST(WaitsReportTest, RequestFromTheCommandLine) {
  auto request = WaitsRequestOf(CommandLine::FromValues(
      {{"job", {"j"}}, {"steps", {"3:7"}}, {"ranks", {"0,2-3"}}}, {}));
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->job(), "j");
  EXPECT_EQ(request->first_step(), 3);
  EXPECT_EQ(request->last_step(), 7);
  EXPECT_EQ(request->ranks_size(), 3);
  EXPECT_EQ(WaitsRequestOf(CommandLine::FromValues({{"steps", {"7:3"}}}, {}))
                .status(),
            absl::InvalidArgumentError(
                "--steps \"7:3\": write FIRST:LAST, FIRST <= LAST"));
  EXPECT_EQ(
      WaitsRequestOf(
          CommandLine::FromValues({{"steps", {"3:7"}}, {"step", {"5"}}}, {}))
          .status(),
      absl::InvalidArgumentError("give --step N or --steps A:B, not both"));
  auto one = WaitsRequestOf(CommandLine::FromValues({{"step", {"5"}}}, {}));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->first_step(), 5);
  EXPECT_EQ(one->last_step(), 5);
  EXPECT_TRUE(one->ranks().empty());
}

}  // namespace
}  // namespace meridian
