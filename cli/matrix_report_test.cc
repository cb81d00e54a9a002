#include "cli/matrix_report.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::StatsReply TwoPairs() {
  v1::StatsReply reply;
  reply.set_job("train \"a\"");
  v1::RankTraffic* a = reply.add_matrix();
  a->set_from_rank(0);
  a->set_to_rank(1);
  a->set_messages(2);
  a->set_bytes(80);
  v1::RankTraffic* b = reply.add_matrix();
  b->set_from_rank(12);
  b->set_to_rank(3);
  b->set_messages(1000000);
  b->set_bytes(int64_t{1} << 40);
  // The other statistics are not printed.
  reply.set_elapsed_ns(5);
  reply.add_ops()->set_name("MPI_Send");
  return reply;
}

TEST(MatrixReportTest, TextListsEachPairThenTheTotals) {
  EXPECT_EQ(MatrixText(TwoPairs(), false),
            "Job train \"a\": messages and bytes sent from rank to rank (MPI "
            "and c10d point-to-point, MPI one-sided; world ranks).\n"
            "  from     to     messages            bytes\n"
            "     0      1            2               80\n"
            "    12      3      1000000    1099511627776\n"
            "total: 2 pairs, 1000002 messages, 1099511627856 bytes\n");
  v1::StatsReply empty;
  empty.set_job("j");
  EXPECT_EQ(MatrixText(empty, true),
            "Job j: messages and bytes sent from rank to rank (MPI "
            "and c10d point-to-point, MPI one-sided, collectives expanded; "
            "world ranks).\n"
            "no traffic between the selected ranks\n");
}

TEST(MatrixReportTest, Json) {
  EXPECT_EQ(MatrixJson(TwoPairs()),
            "{\"job\":\"train \\\"a\\\"\",\"matrix\":["
            "{\"from\":0,\"to\":1,\"messages\":2,\"bytes\":80},"
            "{\"from\":12,\"to\":3,\"messages\":1000000,"
            "\"bytes\":1099511627776}]}\n");
  v1::StatsReply empty;
  empty.set_job("j");
  EXPECT_EQ(MatrixJson(empty), "{\"job\":\"j\",\"matrix\":[]}\n");
}

TEST(MatrixReportTest, Csv) {
  EXPECT_EQ(MatrixCsv(TwoPairs()),
            "from,to,messages,bytes\n"
            "0,1,2,80\n"
            "12,3,1000000,1099511627776\n");
  EXPECT_EQ(MatrixCsv(v1::StatsReply()), "from,to,messages,bytes\n");
}

}  // namespace
}  // namespace meridian
