#include "cli/sql_report.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::SqlReply Reply() {
  v1::SqlReply reply;
  reply.add_columns("rank");
  reply.add_columns("name");
  reply.add_columns("ms");
  reply.add_columns("raw");
  v1::SqlRow* row = reply.add_rows();
  row->add_values()->set_integer(0);
  row->add_values()->set_text("MPI_Allreduce");
  row->add_values()->set_real(0.25);
  row->add_values()->set_blob(std::string("\x01\xff", 2));
  row = reply.add_rows();
  row->add_values()->set_integer(-1);
  row->add_values()->set_text("a \"b\", c\nd");
  row->add_values();  // NULL
  row->add_values();
  return reply;
}

TEST(SqlReportTest, Text) {
  EXPECT_EQ(SqlText(Reply()),
            "rank|name|ms|raw\n"
            "0|MPI_Allreduce|0.25|x'01ff'\n"
            "-1|a \"b\", c\nd||\n");
}

TEST(SqlReportTest, Csv) {
  EXPECT_EQ(SqlCsv(Reply()),
            "rank,name,ms,raw\n"
            "0,MPI_Allreduce,0.25,x'01ff'\n"
            "-1,\"a \"\"b\"\", c\nd\",,\n");
}

TEST(SqlReportTest, Json) {
  EXPECT_EQ(SqlJson(Reply()),
            "{\"columns\":[\"rank\",\"name\",\"ms\",\"raw\"],\"rows\":["
            "[0,\"MPI_Allreduce\",0.25,\"x'01ff'\"],"
            "[-1,\"a \\\"b\\\", c\\nd\",null,null]]}\n");
}

TEST(SqlReportTest, NoRows) {
  v1::SqlReply reply;
  reply.add_columns("n");
  EXPECT_EQ(SqlText(reply), "n\n");
  EXPECT_EQ(SqlJson(reply), "{\"columns\":[\"n\"],\"rows\":[]}\n");
}

}  // namespace
}  // namespace meridian
