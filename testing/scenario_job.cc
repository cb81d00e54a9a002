#include "testing/scenario_job.h"

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;

// Adds spans for one rank: Span(thread, category, name, start, end).
class RankWriter {
 public:
  RankWriter(BatchBuilder& builder, int process, int rank, int64_t offset)
      : builder_(builder), process_(process), rank_(rank), offset_(offset) {}

  v1::Span* Span(const std::string& thread, v1::Category category,
                 const char* name, int64_t start, int64_t end, int64_t step) {
    auto it = tracks_.find(thread);
    if (it == tracks_.end()) {
      const int id = 20000 + rank_ * 10 + static_cast<int>(tracks_.size());
      it =
          tracks_
              .emplace(thread, builder_.DeclareTrack(
                                   process_, v1::TRACK_KIND_THREAD, id, thread))
              .first;
    }
    v1::Span* span = builder_.AddSpan(
        it->second, category, name, kScenarioT0 + offset_ + start, end - start);
    span->set_step(step);
    return span;
  }
  v1::Span* Mpi(const char* name, int64_t start, int64_t end, int64_t step,
                const std::string& thread = "main") {
    v1::Span* span = Span(thread, v1::CATEGORY_MPI, name, start, end, step);
    span->set_comm(1);
    span->set_comm_size(kScenarioRanks);
    return span;
  }
  void User(const char* name, int64_t start, int64_t end, int64_t step) {
    Span("main", v1::CATEGORY_USER, name, start, end, step);
  }
  int rank() const { return rank_; }

 private:
  BatchBuilder& builder_;
  int process_;
  int rank_;
  int64_t offset_;
  std::map<std::string, int> tracks_;
};

void SlowRank(RankWriter& w) {
  const int r = w.rank();
  for (int s = 0; s < 4; ++s) {
    const int64_t t = s * 10 * kMs;
    const int64_t forward = r == 2 ? 5 * kMs : 3 * kMs;
    w.User("step", t, t + 5100 * kUs, s);
    w.User("forward", t, t + forward, s);
    v1::Span* main = w.Mpi("MPI_Allreduce", t + forward, t + 5100 * kUs, s);
    main->set_seq(2 * s + 1);
    main->set_bytes(1 << 20);
    v1::Span* background =
        w.Mpi("MPI_Allreduce", t + kMs, t + 2 * kMs, s, "comm");
    background->set_comm(2);
    background->set_seq(s + 1);
    background->set_bytes(4096);
  }
}

void SlowLink(RankWriter& w) {
  const int r = w.rank();
  for (int s = 0; s < 2; ++s) {
    const int64_t t = s * 10 * kMs;
    const int64_t received = t + kMs + (r == 2 ? 2 * kMs : 100 * kUs);
    w.User("compute", t, t + kMs, s);
    v1::Span* recv = w.Mpi("MPI_Irecv", t + kMs, received, s);
    recv->set_peer((r + kScenarioRanks - 1) % kScenarioRanks);
    recv->set_tag(7);
    recv->set_bytes(1 << 20);
    v1::Span* send = w.Mpi("MPI_Send", t + kMs, t + 1010 * kUs, s);
    send->set_peer((r + 1) % kScenarioRanks);
    send->set_tag(7);
    send->set_bytes(1 << 20);
    w.Mpi("MPI_Wait", t + 1010 * kUs, received, s);
    w.Mpi("MPI_Barrier", received, t + 3010 * kUs, s)->set_seq(s + 1);
  }
}

void LateEveryOtherStep(RankWriter& w) {
  const int r = w.rank();
  for (int s = 0; s < 4; ++s) {
    const int64_t t = s * 10 * kMs;
    const bool late = s % 2 == 1;
    const int64_t forward = late && r == 1 ? 4 * kMs : 2 * kMs;
    const int64_t last = late ? 4 * kMs : 2 * kMs;
    w.User("forward", t, t + forward, s);
    v1::Span* allreduce =
        w.Mpi("MPI_Allreduce", t + forward, t + last + 100 * kUs, s);
    allreduce->set_seq(s + 1);
    allreduce->set_bytes(1 << 20);
  }
}

void SetupInStep(RankWriter& w) {
  const int r = w.rank();
  // As a Python program that imports mpi4py in its first step: MPI_Init
  // inside step 0.
  const int64_t init_end = r == 2 ? 4 * kMs : 3 * kMs;
  w.User("step", 0, 6 * kMs, 0);
  w.Mpi("MPI_Init", 0, init_end, 0);
  w.User("compute", init_end, 5 * kMs, 0);
  w.Mpi("MPI_Allreduce", 5 * kMs, 6 * kMs, 0)->set_seq(1);
  // Step 1 opened (as auto_steps() opens one at the last optimizer.step())
  // and never ended: no "step" span, so no step.
  w.User("eval", 6 * kMs, 6300 * kUs, 1);
  w.Mpi("MPI_Finalize", 6300 * kUs, 6800 * kUs, 0)->clear_step();
}

void P2pChain(RankWriter& w) {
  const int r = w.rank();
  // Rank k's receive ends 50 us after rank k-1's send starts at
  // 1 ms + (k-1) * 1.05 ms.
  const int64_t received = r == 0 ? 0 : r * 1050 * kUs;
  if (r > 0) {
    v1::Span* recv = w.Mpi("MPI_Recv", 0, received, 0);
    recv->set_peer(r - 1);
    recv->set_bytes(1 << 20);
  }
  w.User("compute", received, received + kMs, 0);
  if (r < kScenarioRanks - 1) {
    v1::Span* send =
        w.Mpi("MPI_Send", received + kMs, received + 1050 * kUs, 0);
    send->set_peer(r + 1);
    send->set_bytes(1 << 20);
  }
}

// One wait of each pattern (wait_states.h), each rank's "compute" the cause.
void Waits(RankWriter& w) {
  const int r = w.rank();
  auto mpi = [&w](const char* name, int64_t start, int64_t end, int peer) {
    v1::Span* span = w.Mpi(name, start, end, 0);
    if (peer >= 0) span->set_peer(peer);
    span->set_bytes(8);
    return span;
  };
  // Late sender: rank 1 computes 2 ms before its send to rank 0. Late
  // receiver: rank 3 computes 1.5 ms before the receive of rank 2's Ssend.
  if (r == 0) mpi("MPI_Recv", 0, 2050 * kUs, 1);
  if (r == 1) {
    w.User("compute", 0, 2 * kMs, 0);
    mpi("MPI_Send", 2 * kMs, 2050 * kUs, 0);
  }
  if (r == 2) mpi("MPI_Ssend", 0, 1550 * kUs, 3);
  if (r == 3) {
    w.User("compute", 0, 1500 * kUs, 0);
    mpi("MPI_Recv", 1500 * kUs, 1550 * kUs, 2);
  }
  if (r >= 2) w.User("compute", 1550 * kUs, 2050 * kUs, 0);
  // Then four collectives, each with one rank computing 1 ms before it:
  // Allreduce (rank 2), Bcast from rank 1 (rank 1), Reduce to rank 0
  // (rank 3; ranks 1 and 2 return at once and compute), Barrier (rank 0).
  struct Collective {
    const char* name;
    int late;
    int root;
  };
  const Collective collectives[] = {{"MPI_Allreduce", 2, -1},
                                    {"MPI_Bcast", 1, 1},
                                    {"MPI_Reduce", 3, 0},
                                    {"MPI_Barrier", 0, -1}};
  int64_t t = 2050 * kUs;
  for (int seq = 1; seq <= 4; ++seq) {
    const Collective& c = collectives[seq - 1];
    const int64_t done = t + 1050 * kUs;
    int64_t start = t, end = done;
    if (r == c.late) {
      w.User("compute", t, t + kMs, 0);
      start = t + kMs;
    } else if (c.root == 0 && r != 0) {  // a reduce's member: at once
      end = t + 50 * kUs;
      w.User("compute", end, done, 0);
    }
    mpi(c.name, start, end, c.root)->set_seq(seq);
    t = done;
  }
}

const std::map<std::string, std::function<void(RankWriter&)>>& Scenarios() {
  static const auto* const scenarios =
      new std::map<std::string, std::function<void(RankWriter&)>>{
          {"slow-rank", SlowRank},
          {"slow-link", SlowLink},
          {"late-every-other-step", LateEveryOtherStep},
          {"p2p-chain", P2pChain},
          {"setup-in-step", SetupInStep},
          {"waits", Waits},
      };
  return *scenarios;
}

}  // namespace

std::vector<std::string> ScenarioNames() {
  std::vector<std::string> names;
  for (const auto& [name, build] : Scenarios()) names.push_back(name);
  return names;
}

absl::Status CheckScenario(const std::string& scenario) {
  if (Scenarios().count(scenario)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown scenario \"", scenario,
                   "\"; known: ", absl::StrJoin(ScenarioNames(), ", ")));
}

std::vector<std::vector<v1::Batch>> ScenarioBatches(const std::string& scenario,
                                                    const std::string& job,
                                                    int64_t node1_offset_ns) {
  std::vector<std::vector<v1::Batch>> nodes;
  auto it = Scenarios().find(scenario);
  if (it == Scenarios().end()) return nodes;
  for (int node = 0; node < kScenarioNodes; ++node) {
    BatchBuilder builder(absl::StrCat("scenario/", job, "/node-", node));
    const int64_t offset = node == 1 ? node1_offset_ns : 0;
    const int per_node = kScenarioRanks / kScenarioNodes;
    for (int rank = node * per_node; rank < (node + 1) * per_node; ++rank) {
      const int process =
          builder.DeclareProcess({job, absl::StrCat("node-", node), rank,
                                  rank - node * per_node, 10000 + rank});
      RankWriter writer(builder, process, rank, offset);
      it->second(writer);
    }
    const uint32_t node_name = builder.String(absl::StrCat("node-", node));
    v1::Batch batch = builder.Take();
    if (node1_offset_ns != 0) {
      v1::ClockModel* clock = batch.mutable_clock();
      clock->set_node(node_name);
      clock->set_reference_ns(kScenarioT0 + offset);
      clock->set_offset_ns(offset);
      clock->set_uncertainty_ns(kUs);
    }
    nodes.push_back({std::move(batch)});
  }
  return nodes;
}

}  // namespace meridian
