// meridian-synth: sends a synthetic multi-rank job (testing/synthetic_job.h) to
// a collector, one concurrent stream per node, as node agents would.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/command_line.h"
#include "common/version.h"
#include "store/store.h"
#include "testing/scenario_job.h"
#include "testing/synth_usage.h"
#include "testing/synthetic_job.h"
#include "testing/synthetic_store.h"
#include "wire/ingest_client.h"

namespace {

int Fail(const std::string& message) {
  fprintf(stderr, "meridian-synth: %s\n", message.c_str());
  return 2;
}

// Writes `job` into the store at `location` (WriteSyntheticJob).
int WriteToStore(const meridian::SyntheticJob& job,
                 const std::string& location) {
  meridian::StoreOptions options;
  options.full_sync = false;
  auto store = meridian::Store::Open(location, options);
  if (!store.ok()) return Fail(std::string(store.status().message()));
  auto spans = meridian::WriteSyntheticJob(job, **store);
  if (!spans.ok()) return Fail(std::string(spans.status().message()));
  printf("job %s: %d ranks on %d nodes, %d steps: %lld spans written to %s\n",
         job.job.c_str(), job.ranks, job.nodes, job.steps,
         static_cast<long long>(*spans), location.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto line = meridian::CommandLine::Parse(args, 1, meridian::SynthValueFlags(),
                                           meridian::SynthSwitches());
  if (!line.ok()) return Fail(std::string(line.status().message()));
  if (line->Has("version")) {
    printf("meridian-synth %s\n", meridian::kVersion);
    return 0;
  }
  if (line->Has("help")) {
    fputs(meridian::kSynthUsage, stdout);
    return 0;
  }
  const std::string collector = line->Get("collector", "127.0.0.1:7070");
  auto connect = [&collector] {
    return grpc::CreateChannel(collector, grpc::InsecureChannelCredentials());
  };
  if (line->Has("scenario")) {
    const std::string scenario = line->Get("scenario");
    absl::Status known = meridian::CheckScenario(scenario);
    if (!known.ok()) return Fail(std::string(known.message()));
    const std::string job = line->Get("job", scenario);
    auto offset = line->GetInt("node1-offset-ns", 0);
    if (!offset.ok()) return Fail(std::string(offset.status().message()));
    auto nodes = meridian::ScenarioBatches(scenario, job, *offset);
    auto reports = meridian::SendConcurrently(
        connect, nodes, std::vector<int>(nodes.size(), 1));
    for (const auto& report : reports) {
      if (!report.ok()) return Fail(std::string(report.status().message()));
      if (report->rejected > 0) return Fail("the collector rejected a batch");
    }
    printf("job %s: scenario %s sent (%d ranks on %d nodes)\n", job.c_str(),
           scenario.c_str(), meridian::kScenarioRanks,
           meridian::kScenarioNodes);
    return 0;
  }
  meridian::SyntheticJob job;
  job.job = line->Get("job", job.job);
  auto ranks = line->GetInt("ranks", job.ranks);
  auto nodes = line->GetInt("nodes", job.nodes);
  auto steps = line->GetInt("steps", job.steps);
  auto per_batch = line->GetInt("spans-per-batch", job.spans_per_batch);
  auto layers = line->GetInt("layers", 0);
  auto jitter = line->GetInt("jitter-ns", 0);
  for (const auto* v : {&ranks, &nodes, &steps, &per_batch, &layers, &jitter}) {
    if (!v->ok()) return Fail(std::string(v->status().message()));
  }
  job.ranks = *ranks;
  job.nodes = *nodes;
  job.steps = *steps;
  job.spans_per_batch = *per_batch;
  if (job.ranks < 1 || job.nodes < 1 || job.nodes > job.ranks ||
      job.steps < 0 || job.spans_per_batch < 1 || *layers < 0 ||
      *layers > 100000 || *jitter < 0 || *jitter > 1000000) {
    return Fail(
        "need ranks >= nodes >= 1, steps >= 0, spans-per-batch >= 1, "
        "layers 0 to 100000, jitter-ns 0 to 1000000");
  }
  job.layers = static_cast<int>(*layers);
  job.declare_ended = line->Has("ended");
  job.jitter_ns = *jitter;
  if (line->Has("store")) return WriteToStore(job, line->Get("store"));
  const bool resend = line->Has("resend");
  auto pace_ms = line->GetInt("pace-ms", -1);
  if (!pace_ms.ok()) return Fail(std::string(pace_ms.status().message()));
  if (*pace_ms >= 0) {
    job.t0_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  }

  std::vector<std::vector<meridian::v1::Batch>> batches_by_node;
  size_t rounds = 1;
  for (int node = 0; node < job.nodes; ++node) {
    batches_by_node.push_back(meridian::SyntheticBatches(job, node));
    rounds = std::max(rounds, batches_by_node.back().size());
  }
  // Without --pace-ms, one round of every batch.
  if (*pace_ms < 0) rounds = 1;
  meridian::SendReport total;
  for (size_t round = 0; round < rounds; ++round) {
    std::vector<std::vector<meridian::v1::Batch>> sent = batches_by_node;
    if (*pace_ms >= 0) {
      for (auto& node : sent) {
        node = round < node.size()
                   ? std::vector<meridian::v1::Batch>{node[round]}
                   : std::vector<meridian::v1::Batch>{};
      }
      if (round > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(*pace_ms));
      }
    }
    auto reports = meridian::SendConcurrently(
        connect, sent, std::vector<int>(job.nodes, resend ? 2 : 1));
    for (int node = 0; node < job.nodes; ++node) {
      if (!reports[node].ok()) {
        fprintf(stderr, "meridian-synth: node-%d: %s\n", node,
                std::string(reports[node].status().message()).c_str());
        return 1;
      }
      total.Add(*reports[node]);
    }
  }
  printf(
      "job %s: %d ranks on %d nodes, %d steps: %lld batches stored "
      "(%lld spans), %lld duplicates, %lld rejected\n",
      job.job.c_str(), job.ranks, job.nodes, job.steps,
      static_cast<long long>(total.stored),
      static_cast<long long>(total.spans_stored),
      static_cast<long long>(total.duplicate),
      static_cast<long long>(total.rejected));
  return total.rejected == 0 ? 0 : 1;
}
