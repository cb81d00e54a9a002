#include "testing/synthetic_job.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;

}  // namespace

int SyntheticNodeOf(const SyntheticJob& job, int rank) {
  return static_cast<int>(static_cast<int64_t>(rank) * job.nodes / job.ranks);
}

std::string SyntheticAgentId(const SyntheticJob& job, int node) {
  return absl::StrCat("synthetic/", job.job, "/node-", node);
}

std::vector<v1::Batch> SyntheticBatches(const SyntheticJob& job, int node) {
  std::vector<v1::Batch> batches;
  ForEachSyntheticBatch(
      job, node, [&](v1::Batch batch) { batches.push_back(std::move(batch)); });
  return batches;
}

void ForEachSyntheticBatch(const SyntheticJob& job, int node,
                           const std::function<void(v1::Batch)>& sink) {
  BatchBuilder builder(SyntheticAgentId(job, node));
  uint64_t state = 0x9e3779b97f4a7c15ull * (node + 1);
  // splitmix64: a fixed sequence, the same on every run.
  const auto jitter = [&]() -> int64_t {
    if (job.jitter_ns <= 0) return 0;
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<int64_t>((z ^ (z >> 31)) %
                                static_cast<uint64_t>(job.jitter_ns));
  };
  auto flush_if_full = [&] {
    if (static_cast<int>(builder.spans()) >= job.spans_per_batch) {
      sink(builder.Take());
    }
  };
  // This node's clock: node_skew_ns ahead of the one before.
  const int64_t t0 = job.t0_ns + node * job.node_skew_ns;
  int first_rank_on_node = -1;
  struct Local {
    int rank;
    int process;
    int main;  // its track
  };
  // Declared as its first span comes.
  auto declare = [&](int rank) {
    if (first_rank_on_node < 0) first_rank_on_node = rank;
    int process = builder.DeclareProcess(
        {job.job, absl::StrCat("node-", node), rank, rank - first_rank_on_node,
         10000 + rank, job.declare_ended ? job.ranks : 0});
    return Local{rank, process,
                 builder.DeclareTrack(process, v1::TRACK_KIND_THREAD,
                                      20000 + rank, "main")};
  };
  auto collective = [&](v1::Span* span, int64_t bytes, uint64_t seq) {
    span->set_bytes(bytes);
    span->set_comm(1);
    span->set_comm_size(job.ranks);
    span->set_seq(seq);
  };
  auto bcast_of = [&](const Local& local) {
    v1::Span* bcast = builder.AddSpan(local.main, v1::CATEGORY_MPI, "MPI_Bcast",
                                      t0 - kMs, 100 * kUs);
    collective(bcast, 1000, 0);
    bcast->set_peer(0);
    flush_if_full();
  };
  auto step_of = [&](const Local& local, int s) {
    const int rank = local.rank;
    const int main = local.main;
    const int64_t t = t0 + s * 10 * kMs;
    auto phase = [&](const char* name, int64_t start, int64_t dur) {
      return builder.AddSpan(main, v1::CATEGORY_USER, name, start + jitter(),
                             dur + jitter());
    };
    phase("step", t, 9 * kMs)->set_step(s);
    phase("forward", t, 3 * kMs)->set_step(s);
    phase("backward", t + 3 * kMs, 4 * kMs)->set_step(s);
    // Slices of [start, start + dur), inside the phase (its jitter only
    // lengthens it); jitter shortens a slice by up to half.
    auto layers = [&](int64_t start, int64_t dur) {
      const int64_t slice = dur / job.layers;
      for (int i = 0; i < job.layers; ++i) {
        const int64_t shorter = slice > 1 ? jitter() % (slice / 2 + 1) : 0;
        builder
            .AddSpan(main, v1::CATEGORY_USER, "layer", start + i * slice,
                     std::max<int64_t>(slice - kUs - shorter, 1))
            ->set_step(s);
        flush_if_full();
      }
    };
    if (job.layers > 0) {
      layers(t, 3 * kMs);
      layers(t + 3 * kMs, 4 * kMs);
    }
    v1::Span* small = builder.AddSpan(main, v1::CATEGORY_MPI, "MPI_Allreduce",
                                      t + 7 * kMs + jitter(),
                                      20 * kUs + rank * kUs + jitter());
    collective(small, 8, 2 * s + 1);
    small->set_step(s);
    v1::Span* large = builder.AddSpan(main, v1::CATEGORY_MPI, "MPI_Allreduce",
                                      t + 7100 * kUs + jitter(),
                                      kMs + rank * 10 * kUs + jitter());
    collective(large, 4 << 20, 2 * s + 2);
    large->set_step(s);
    phase("optimizer", t + 8200 * kUs, 500 * kUs)->set_step(s);
    flush_if_full();
  };
  std::vector<Local> locals;
  for (int rank = 0; rank < job.ranks; ++rank) {
    if (SyntheticNodeOf(job, rank) != node) continue;
    locals.push_back(declare(rank));
    bcast_of(locals.back());
    if (job.time_ordered) continue;
    for (int s = 0; s < job.steps; ++s) step_of(locals.back(), s);
  }
  if (job.time_ordered) {
    for (int s = 0; s < job.steps; ++s) {
      for (const Local& local : locals) step_of(local, s);
    }
  }
  if (job.declare_ended) {
    for (const Local& local : locals) builder.MarkEnded(local.process);
  }
  if (builder.spans() > 0 || (job.declare_ended && !locals.empty())) {
    sink(builder.Take());
  }
}

}  // namespace meridian
