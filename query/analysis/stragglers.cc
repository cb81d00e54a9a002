#include "query/analysis/stragglers.h"

#include <algorithm>
#include <map>
#include <vector>

namespace meridian {
namespace {

// How long `waiter` waited for something that started at `arrival`.
int64_t WaitFor(const JobSpan& waiter, int64_t arrival) {
  return std::max<int64_t>(0, std::min(arrival, waiter.end) - waiter.start);
}

// What the instances and messages of one bucket (the job, or one step)
// charged to each rank, and their instances.
struct Tally {
  std::map<int32_t, v1::RankWait> ranks;
  std::vector<v1::CollectiveInstance> instances;
  int64_t messages = 0;

  void Charge(const JobSpan& waiter, int32_t late_rank, int64_t wait,
              bool collective) {
    if (wait <= 0) return;
    v1::RankWait& late = ranks[late_rank];
    late.set_rank(late_rank);
    late.set_wait_ns(late.wait_ns() + wait);
    if (collective) {
      late.set_collective_wait_ns(late.collective_wait_ns() + wait);
    } else {
      late.set_late_sender_wait_ns(late.late_sender_wait_ns() + wait);
    }
    v1::RankWait& w = ranks[waiter.rank];
    w.set_rank(waiter.rank);
    w.set_waited_ns(w.waited_ns() + wait);
  }

  v1::StragglersReply Finish(int head) {
    v1::StragglersReply reply;
    reply.set_instances(static_cast<int64_t>(instances.size()));
    reply.set_messages(messages);
    ListStragglers(std::move(instances), head, std::move(ranks), &reply);
    return reply;
  }
};

// Adds each instance and message of `graph` to the tally `bucket` gives
// for its step (nullopt: untagged); a null tally leaves it out.
template <typename Bucket>
void TallyGraph(const DependencyGraph& graph, const Bucket& bucket) {
  const JobSpans& spans = graph.spans();
  const std::vector<JobSpan>& all = spans.spans();
  auto step_of = [](const JobSpan& s) {
    return s.has_step ? std::optional<int64_t>(s.step) : std::nullopt;
  };
  const MpiMatching& mpi = graph.mpi();
  for (int64_t k = 0; k < mpi.instances(); ++k) {
    absl::Span<const int32_t> members = mpi.members(k);
    const JobSpan* first = &all[members[0]];
    const JobSpan* last = first;
    v1::CollectiveInstance instance;
    for (int32_t i : members) {
      const JobSpan& m = all[i];
      if (m.start < first->start) first = &m;
      if (m.start > last->start) last = &m;
      // The lowest step among the members: one step, whichever block of
      // steps loads which members.
      if (m.has_step && (!instance.has_step() || m.step < instance.step())) {
        instance.set_step(m.step);
      }
    }
    Tally* tally =
        bucket(instance.has_step() ? std::optional<int64_t>(instance.step())
                                   : std::nullopt);
    if (tally == nullptr) continue;
    // Each member whose end waited for a later start (its end binding,
    // which the graph took from its group: the instance's, or its own in a
    // Scan or neighbor collective) waited for that start.
    int64_t waited = 0;
    for (int32_t i : members) {
      const int32_t awaited = graph.end_binding(i);
      if (awaited < 0) continue;
      const int64_t wait = WaitFor(all[i], all[awaited].start);
      tally->Charge(all[i], all[awaited].rank, wait, /*collective=*/true);
      waited += wait;
    }
    const int64_t skew = last->start - first->start;
    if (skew > 0) {
      v1::RankWait& late = tally->ranks[last->rank];
      late.set_rank(last->rank);
      late.set_instances_last(late.instances_last() + 1);
    }
    instance.set_comm(first->comm);
    instance.set_seq(first->seq);
    instance.set_name(spans.name(*first));
    instance.set_ranks(static_cast<int32_t>(members.size()));
    instance.set_start_ns(first->start);
    instance.set_skew_ns(skew);
    instance.set_last_rank(skew > 0 ? last->rank : -1);
    instance.set_wait_ns(waited);
    tally->instances.push_back(std::move(instance));
  }
  for (const auto& [send, recv] : mpi.messages()) {
    const JobSpan& s = all[send];
    Tally* tally = bucket(s.has_step ? step_of(s) : step_of(all[recv]));
    if (tally == nullptr) continue;
    ++tally->messages;
    // The receive waited if its end is bound to the send (which started
    // after it).
    if (graph.end_binding(recv) == send) {
      tally->Charge(all[recv], s.rank, WaitFor(all[recv], s.start),
                    /*collective=*/false);
    }
  }
}

}  // namespace

void ListStragglers(std::vector<v1::CollectiveInstance> instances, int head,
                    std::map<int32_t, v1::RankWait> ranks,
                    v1::StragglersReply* reply) {
  std::stable_sort(
      instances.begin(), instances.end(),
      [](const v1::CollectiveInstance& a, const v1::CollectiveInstance& b) {
        return a.skew_ns() > b.skew_ns();
      });
  if (head > 0 && instances.size() > static_cast<size_t>(head)) {
    instances.resize(head);
  }
  for (v1::CollectiveInstance& c : instances) {
    *reply->add_collectives() = std::move(c);
  }
  std::vector<v1::RankWait> by_wait;
  for (auto& [rank, wait] : ranks) by_wait.push_back(std::move(wait));
  std::stable_sort(by_wait.begin(), by_wait.end(),
                   [](const v1::RankWait& a, const v1::RankWait& b) {
                     return a.wait_ns() > b.wait_ns();
                   });
  for (v1::RankWait& r : by_wait) *reply->add_ranks() = std::move(r);
}

v1::StragglersReply Stragglers(const DependencyGraph& graph, int head) {
  Tally tally;
  for (int32_t rank : graph.spans().Ranks()) tally.ranks[rank].set_rank(rank);
  TallyGraph(graph, [&tally](std::optional<int64_t>) { return &tally; });
  return tally.Finish(head);
}

std::map<int64_t, v1::StragglersReply> StragglersByStep(
    const DependencyGraph& graph, int64_t first, int64_t last, int head) {
  std::map<int64_t, Tally> tallies;
  TallyGraph(graph, [&](std::optional<int64_t> step) -> Tally* {
    if (!step || *step < first || *step > last) return nullptr;
    return &tallies[*step];
  });
  std::map<int64_t, v1::StragglersReply> replies;
  for (auto& [step, tally] : tallies) replies[step] = tally.Finish(head);
  return replies;
}

}  // namespace meridian
