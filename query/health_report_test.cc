#include "query/health_report.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::HealthReply Stalled() {
  v1::HealthReply h;
  h.set_job("j");
  h.set_state("stalled");
  h.set_stalled_for_ns(8000000000);
  h.set_stall_after_ns(5000000000);
  v1::HealthStall* s = h.add_stalls();
  s->set_kind("missing");
  s->set_comm(0xab);
  s->set_seq(9);
  s->set_op("MPI_Allreduce");
  s->add_waiting_ranks(0);
  s->add_suspect_ranks(1);
  v1::HealthRank* r = s->add_ranks();
  r->set_rank(0);
  r->set_node("n0");
  r->set_pid(10);
  r->set_tid(10);
  r->set_in("MPI_Allreduce");
  r->set_in_for_ns(8000000000);
  r->set_category("mpi");
  r->set_comm(0xab);
  r->set_has_seq(true);
  r->set_seq(9);
  r->set_bytes(8);
  r->set_peer(-1);
  r->set_tag(-1);
  r->set_idle_ns(-1);
  r->set_sampled_ago_ns(500000000);
  r = s->add_ranks();
  r->set_rank(1);
  r->set_node("n0");
  r->set_pid(11);
  r->set_tid(11);
  r->set_in_for_ns(9000000000);
  r->set_peer(-1);
  r->set_tag(-1);
  r->set_idle_ns(9000000000);
  r->add_stack("spin (hang_job.c:20)");
  r->add_python_stack("train.py:12 in step");
  *h.add_ranks() = s->ranks(0);
  *h.add_ranks() = s->ranks(1);
  return h;
}

TEST(HealthReportTest, Json) {
  EXPECT_EQ(
      HealthJson(Stalled()),
      "{\"job\":\"j\",\"state\":\"stalled\",\"stalled_for_ns\":8000000000,"
      "\"stall_after_ns\":5000000000,\"stalls\":[{\"kind\":\"missing\","
      "\"comm\":\"0xab\",\"seq\":9,\"op\":\"MPI_Allreduce\","
      "\"waiting_ranks\":[0],\"suspect_ranks\":[1],\"ranks\":["
      "{\"rank\":0,\"node\":\"n0\",\"pid\":10,\"tid\":10,\"in\":"
      "\"MPI_Allreduce\",\"waits_for\":\"\",\"in_for_ns\":8000000000,"
      "\"category\":\"mpi\","
      "\"comm\":\"0xab\",\"seq\":9,\"bytes\":8,\"phase\":\"\",\"idle_ns\":-1,"
      "\"sampled_ago_ns\":500000000,\"stack\":[],\"python_stack\":[]},"
      "{\"rank\":1,\"node\":\"n0\",\"pid\":11,\"tid\":11,\"in\":\"\",\"waits_"
      "for\":\"\","
      "\"in_for_ns\":9000000000,\"category\":\"\",\"phase\":\"\","
      "\"idle_ns\":9000000000,\"sampled_ago_ns\":0,"
      "\"stack\":[\"spin (hang_job.c:20)\"],"
      "\"python_stack\":[\"train.py:12 in step\"]}]}],\"ranks\":["
      "{\"rank\":0,\"node\":\"n0\",\"pid\":10,\"tid\":10,\"in\":"
      "\"MPI_Allreduce\",\"waits_for\":\"\",\"in_for_ns\":8000000000,"
      "\"category\":\"mpi\","
      "\"comm\":\"0xab\",\"seq\":9,\"bytes\":8,\"phase\":\"\",\"idle_ns\":-1,"
      "\"sampled_ago_ns\":500000000,\"stack\":[],\"python_stack\":[]},"
      "{\"rank\":1,\"node\":\"n0\",\"pid\":11,\"tid\":11,\"in\":\"\",\"waits_"
      "for\":\"\","
      "\"in_for_ns\":9000000000,\"category\":\"\",\"phase\":\"\","
      "\"idle_ns\":9000000000,\"sampled_ago_ns\":0,"
      "\"stack\":[\"spin (hang_job.c:20)\"],"
      "\"python_stack\":[\"train.py:12 in step\"]}],\"slowdowns\":[]}\n");
}

TEST(HealthReportTest, Text) {
  EXPECT_EQ(HealthText(Stalled()),
            "Job j: stalled: no rank has left a traced call for 8.0 s "
            "(threshold 5.0 s)\n"
            "\n"
            "Missing ranks at collective #9 of communicator 0xab: ranks 0 "
            "wait in MPI_Allreduce; suspect: 1\n"
            "  rank 0 (n0 pid 10): in MPI_Allreduce #9 8 bytes for 8.0 s\n"
            "  rank 1 (n0 pid 11): in no traced call or phase for 9.0 s\n"
            "      py train.py:12 in step\n"
            "      spin (hang_job.c:20)\n"
            "\n"
            "Every rank, as last sampled:\n"
            "  rank 0 (n0 pid 10): in MPI_Allreduce #9 8 bytes for 8.0 s\n"
            "  rank 1 (n0 pid 11): in no traced call or phase for 9.0 s\n"
            "      py train.py:12 in step\n"
            "      spin (hang_job.c:20)\n");
}

TEST(HealthReportTest, AWaitSaysWhatItWaitsFor) {
  v1::HealthReply h;
  h.set_job("j");
  h.set_state("stalled");
  v1::HealthRank* r = h.add_ranks();
  r->set_rank(1);
  r->set_node("n0");
  r->set_pid(11);
  r->set_in("MPI_Wait");
  r->set_waits_for("MPI_Isend");
  r->set_in_for_ns(3000000000);
  r->set_category("mpi");
  r->set_bytes(16);
  r->set_peer(0);
  r->set_tag(7);
  EXPECT_NE(HealthJson(h).find("\"in\":\"MPI_Wait\",\"waits_for\":"
                               "\"MPI_Isend\",\"in_for_ns\":3000000000,"),
            std::string::npos)
      << HealthJson(h);
  EXPECT_NE(HealthText(h).find("  rank 1 (n0 pid 11): in MPI_Wait for "
                               "MPI_Isend peer/root 0 16 bytes for 3.0 s\n"),
            std::string::npos)
      << HealthText(h);
}

TEST(HealthReportTest, Slowdowns) {
  v1::HealthReply h;
  h.set_job("j");
  h.set_state("running");
  h.set_stall_after_ns(60000000000);
  v1::HealthSlowdown* s = h.add_slowdowns();
  s->set_rank(1);
  s->set_node("n0");
  s->set_metric("compute");
  s->set_from_step(200);
  s->set_ratio(1.6012);
  s->set_baseline_ns(10000000);
  s->set_now_ns(16012000);
  s->set_peer(-1);
  v1::HealthCounterChange* c = s->add_counters();
  c->set_name("cpu.steal_percent");
  c->set_baseline(0.5);
  c->set_now(40.25);
  c = s->add_counters();
  c->set_name("net.eth0.rx_bytes_per_s");
  c->set_baseline(5e7);
  c->set_now(1234567.5);
  EXPECT_EQ(HealthJson(h),
            "{\"job\":\"j\",\"state\":\"running\",\"stalled_for_ns\":0,"
            "\"stall_after_ns\":60000000000,\"stalls\":[],\"ranks\":[],"
            "\"slowdowns\":[{\"rank\":1,\"node\":\"n0\",\"metric\":"
            "\"compute\",\"from_step\":200,\"ratio\":1.601,"
            "\"baseline_ns\":10000000,\"now_ns\":16012000,\"counters\":["
            "{\"name\":\"cpu.steal_percent\",\"baseline\":0.5,\"now\":40.25},"
            "{\"name\":\"net.eth0.rx_bytes_per_s\",\"baseline\":5e+07,"
            "\"now\":1.23457e+06}]}]}\n");
  EXPECT_EQ(HealthText(h),
            "Job j: running\n"
            "\n"
            "Slower than before:\n"
            "  rank 1 (n0): compute 1.60x from step 200 (16.012 ms a step, "
            "was 10.000)\n"
            "    with cpu.steal_percent: 40.25, was 0.5\n"
            "    with net.eth0.rx_bytes_per_s: 1.23457e+06, was 5e+07\n");
}

TEST(HealthReportTest, ALink) {
  v1::HealthReply h;
  h.set_job("j");
  h.set_state("running");
  v1::HealthSlowdown* s = h.add_slowdowns();
  s->set_rank(0);
  s->set_node("n0");
  s->set_metric("link");
  s->set_from_step(200);
  s->set_ratio(4);
  s->set_baseline_ns(400000);
  s->set_now_ns(1600000);
  s->set_peer(1);
  EXPECT_EQ(HealthJson(h),
            "{\"job\":\"j\",\"state\":\"running\",\"stalled_for_ns\":0,"
            "\"stall_after_ns\":0,\"stalls\":[],\"ranks\":[],"
            "\"slowdowns\":[{\"rank\":0,\"node\":\"n0\",\"metric\":"
            "\"link\",\"from_step\":200,\"ratio\":4.000,"
            "\"baseline_ns\":400000,\"now_ns\":1600000,\"peer\":1,"
            "\"counters\":[]}]}\n");
  EXPECT_EQ(HealthText(h),
            "Job j: running\n"
            "\n"
            "Slower than before:\n"
            "  link rank 0 (n0) - rank 1: 4.00x from step 200 (1.600 ms a MiB, "
            "was 0.400)\n");
}

}  // namespace
}  // namespace meridian
