#include "cli/trace_report.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::TraceReply TwoNodes() {
  v1::TraceReply reply;
  auto* a = reply.add_nodes();
  a->set_node("a");
  a->set_agent_id("agent-a");
  a->set_processes(3);
  auto* b = reply.add_nodes();
  b->set_node("b");
  b->set_agent_id("agent-b");
  b->set_processes(0);
  reply.set_unanswered(1);
  return reply;
}

TEST(TraceReportTest, TextNamesTheNodesWithProcesses) {
  EXPECT_EQ(TracedProcesses(TwoNodes()), 3u);
  EXPECT_EQ(TraceText("train", 5, 0, TwoNodes()),
            "meridian trace: 3 processes of job train on 1 node will record "
            "the next 5 steps\n  a: 3 processes\n");
  EXPECT_EQ(TraceText("train", 0, 30, TwoNodes()),
            "meridian trace: 3 processes of job train on 1 node will record "
            "for 30 seconds\n  a: 3 processes\n");
  v1::TraceReply one;
  one.add_nodes()->set_processes(1);
  one.mutable_nodes(0)->set_node("a");
  EXPECT_EQ(TraceText("j", 1, 0, one),
            "meridian trace: 1 process of job j on 1 node will record the "
            "next 1 step\n  a: 1 process\n");
}

TEST(TraceReportTest, JsonHasEveryAgentThatAnswered) {
  EXPECT_EQ(TraceJson("train", 5, 0, TwoNodes()),
            "{\"job\":\"train\",\"steps\":5,\"seconds\":0,\"processes\":3,"
            "\"unanswered\":1,\"nodes\":[{\"node\":\"a\",\"agent_id\":"
            "\"agent-a\",\"processes\":3},{\"node\":\"b\",\"agent_id\":"
            "\"agent-b\",\"processes\":0}]}\n");
  EXPECT_EQ(TraceJson("j", 0, 2, v1::TraceReply()),
            "{\"job\":\"j\",\"steps\":0,\"seconds\":2,\"processes\":0,"
            "\"unanswered\":0,\"nodes\":[]}\n");
}

}  // namespace
}  // namespace meridian
