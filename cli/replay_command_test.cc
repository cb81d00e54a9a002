#include "cli/replay_command.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

absl::StatusOr<v1::ReplayRequest> Parse(
    std::map<std::string, std::vector<std::string>> values) {
  values["job"] = {"j"};
  return ReplayRequestOf(CommandLine::FromValues(std::move(values), {}));
}

TEST(ReplayCommandTest, EveryChangeBecomesPartOfTheRequest) {
  auto request = Parse({{"steps", {"2:5"}},
                        {"scale", {"MPI_All*=0.5", "mpi=0"}},
                        {"rank-like", {"3=0"}},
                        {"comm-model", {"tree"}},
                        {"bandwidth", {"100Gbit/s"}},
                        {"latency", {"5us"}},
                        {"no-wait", {""}}});
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->job(), "j");
  EXPECT_EQ(request->first_step(), 2);
  EXPECT_EQ(request->last_step(), 5);
  ASSERT_EQ(request->scales_size(), 2);
  EXPECT_EQ(request->scales(0).pattern(), "MPI_All*");
  EXPECT_EQ(request->scales(0).factor(), 0.5);
  EXPECT_EQ(request->scales(1).pattern(), "mpi");
  EXPECT_EQ(request->scales(1).factor(), 0);
  ASSERT_EQ(request->rank_like_size(), 1);
  EXPECT_EQ(request->rank_like(0).rank(), 3);
  EXPECT_EQ(request->rank_like(0).like(), 0);
  EXPECT_EQ(request->comm_model().algorithm(), v1::COMM_ALGORITHM_TREE);
  EXPECT_EQ(request->comm_model().bandwidth_bytes_per_s(), 12.5e9);
  EXPECT_EQ(request->comm_model().latency_ns(), 5000);
  EXPECT_TRUE(request->no_wait());

  auto one = Parse({{"step", {"7"}}});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->first_step(), 7);
  EXPECT_EQ(one->last_step(), 7);
  EXPECT_FALSE(Parse({})->has_first_step());
}

TEST(ReplayCommandTest, Bandwidths) {
  EXPECT_EQ(*ParseBandwidth("12.5GB/s"), 12.5e9);
  EXPECT_EQ(*ParseBandwidth("800MiB/s"), 800.0 * 1048576);
  EXPECT_EQ(*ParseBandwidth("1Tbit/s"), 125e9);
  EXPECT_EQ(*ParseBandwidth("1000"), 1000);
  EXPECT_EQ(ParseBandwidth("fast").status().message(),
            "\"fast\" is not a bandwidth; write e.g. 12.5GB/s, 100Gbit/s, "
            "800MiB/s (bare numbers are bytes per second)");
  EXPECT_FALSE(ParseBandwidth("0GB/s").ok());
  EXPECT_FALSE(ParseBandwidth("-1").ok());
}

TEST(ReplayCommandTest, BadFlagsSayWhatToWrite) {
  auto message = [](std::map<std::string, std::vector<std::string>> v) {
    return std::string(Parse(std::move(v)).status().message());
  };
  EXPECT_EQ(message({{"scale", {"compute"}}}),
            "--scale \"compute\": write NAME_GLOB=F or CATEGORY=F, F a number "
            ">= 0 (MPI_Allreduce=0.5, mpi=0)");
  EXPECT_EQ(message({{"scale", {"compute=-2"}}}),
            "--scale \"compute=-2\": write NAME_GLOB=F or CATEGORY=F, F a "
            "number >= 0 (MPI_Allreduce=0.5, mpi=0)");
  EXPECT_EQ(message({{"scale", {"compute=nan"}}}).substr(0, 22),
            "--scale \"compute=nan\":");
  EXPECT_EQ(message({{"rank-like", {"a=1"}}}),
            "--rank-like \"a=1\": write R=S, two ranks (3=0)");
  EXPECT_EQ(message({{"steps", {"5:2"}}}),
            "--steps \"5:2\": write FIRST:LAST, FIRST <= LAST");
  EXPECT_EQ(message({{"step", {"1"}}, {"steps", {"1:2"}}}),
            "give --step N or --steps A:B, not both");
  EXPECT_EQ(message({{"bandwidth", {"1GB/s"}}}),
            "--bandwidth and --latency go with --comm-model ring|tree");
  EXPECT_EQ(message({{"comm-model", {"mesh"}}}),
            "--comm-model \"mesh\": write ring or tree");
  EXPECT_EQ(message({{"comm-model", {"ring"}}}),
            "--comm-model needs --bandwidth B (e.g. 12.5GB/s)");
  EXPECT_EQ(message({{"comm-model", {"ring"}},
                     {"bandwidth", {"1GB/s"}},
                     {"latency", {"-1us"}}}),
            "--latency \"-1us\": write a time >= 0, e.g. 5us, 1.5us, 800ns");
}

TEST(ReplayCommandTest, TextAndJson) {
  v1::ReplayReply reply;
  reply.set_job("j");
  reply.set_measured_ns(4000000);
  reply.set_predicted_ns(3000000);
  reply.set_saving_ns(1000000);
  reply.set_saving_share(0.25);
  reply.set_spans(10);
  v1::ReplayStep* step = reply.add_steps();
  step->set_step(0);
  step->set_measured_ns(4000000);
  step->set_predicted_ns(3000000);
  v1::ReplayRank* rank = step->add_ranks();
  rank->set_rank(1);
  rank->set_measured_ns(4000000);
  rank->set_predicted_ns(3000000);
  *reply.add_ranks() = *rank;
  const std::string text = ReplayText(reply);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "Replay of job j, whole job: measured 4.000 ms, predicted 3.000 "
            "ms: saves 1.000 ms (25.0%)");
  EXPECT_NE(text.find("       0      1        4.000        3.000    25.0%\n"),
            std::string::npos)
      << text;
  const std::string json = ReplayJson(reply);
  EXPECT_EQ(json.substr(0, 107),
            "{\"job\":\"j\",\"measured_ns\":4000000,\"predicted_ns\":3000000,"
            "\"saving_ns\":1000000,\"saving_share\":0.25,\"spans\":10,");
  EXPECT_NE(json.find("\"steps\":[{\"step\":0,\"measured_ns\":4000000,"
                      "\"predicted_ns\":3000000,\"ranks\":[{\"rank\":1,"
                      "\"measured_ns\":4000000,\"predicted_ns\":3000000}]}]"),
            std::string::npos);
  EXPECT_NE(json.find(",\"predicted_path\":{\"job\":\"\""), std::string::npos);

  // Replayed in blocks: no paths, said so.
  reply.set_blocks(3);
  reply.set_first_step(0);
  reply.set_last_step(0);
  const std::string blocks_text = ReplayText(reply);
  EXPECT_EQ(blocks_text.substr(0, blocks_text.find('\n')),
            "Replay of job j, step 0: measured 4.000 ms, predicted 3.000 ms: "
            "saves 1.000 ms (25.0%)");
  EXPECT_NE(blocks_text.find("\nReplayed 3 blocks of steps one at a time, "
                             "each from its measured start (the job is over "
                             "the collector's memory budget): no critical "
                             "paths; a range of steps (--steps A:B) that fits "
                             "has them.\n"),
            std::string::npos)
      << blocks_text;
  EXPECT_EQ(blocks_text.find("Critical path"), std::string::npos);
  const std::string blocks_json = ReplayJson(reply);
  EXPECT_EQ(blocks_json.substr(blocks_json.size() - 13), ",\"blocks\":3}\n");
  EXPECT_EQ(blocks_json.find("_path"), std::string::npos);
}

}  // namespace
}  // namespace meridian
