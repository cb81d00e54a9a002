#include "query/analysis/job_health.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "query/ops/category.h"

namespace meridian {
namespace {

// One rank's shown thread, with times as of now.
struct Rank {
  const LiveProcess* process;
  const v1::ThreadActivity* thread;  // nullptr: no thread reported
  bool in_call = false;
  int64_t in_for_ns = 0;
  int64_t idle_ns = -1;  // since any thread left a call, as of now
};

Rank Summarize(const LiveProcess& p) {
  Rank r{&p, nullptr};
  const int64_t ago = std::max<int64_t>(p.sampled_ago_ns, 0);
  const v1::ThreadActivity* in_call = nullptr;
  const v1::ThreadActivity* in_phase = nullptr;
  for (const v1::ThreadActivity& t : p.activity.threads()) {
    if (!t.call().empty() &&
        (in_call == nullptr || t.call_ns() > in_call->call_ns())) {
      in_call = &t;
    }
    if (!t.phase().empty() &&
        (in_phase == nullptr || t.phase_ns() > in_phase->phase_ns())) {
      in_phase = &t;
    }
    // A thread in a call has been busy since it entered it, not idle since
    // it left the one before: the rank's idle time is its threads' in none.
    if (t.idle_ns() >= 0 && t.call().empty() &&
        (r.idle_ns < 0 || t.idle_ns() + ago < r.idle_ns)) {
      r.idle_ns = t.idle_ns() + ago;
    }
  }
  if (in_call != nullptr) {
    r.thread = in_call;
    r.in_call = true;
    r.in_for_ns = in_call->call_ns() + ago;
  } else if (in_phase != nullptr) {
    r.thread = in_phase;
    r.in_for_ns = in_phase->phase_ns() + ago;
  } else if (p.activity.threads_size() > 0) {
    r.thread = &p.activity.threads(0);
    r.in_for_ns = std::max<int64_t>(r.thread->idle_ns(), 0) + ago;
  }
  return r;
}

void Describe(const Rank& r, v1::HealthRank* out) {
  const v1::ProcessActivity& a = r.process->activity;
  out->set_rank(a.rank());
  out->set_node(r.process->node);
  out->set_pid(a.pid());
  out->set_peer(-1);
  out->set_tag(-1);
  out->set_idle_ns(r.idle_ns);
  out->set_sampled_ago_ns(std::max<int64_t>(r.process->sampled_ago_ns, 0));
  out->set_in_for_ns(r.in_for_ns);
  if (r.thread == nullptr) return;
  const v1::ThreadActivity& t = *r.thread;
  out->set_tid(t.tid());
  out->set_phase(t.phase());
  for (const std::string& frame : t.stack()) out->add_stack(frame);
  for (const std::string& frame : t.python_stack()) {
    out->add_python_stack(frame);
  }
  out->set_stack_error(t.stack_error());
  if (!r.in_call) {
    out->set_in(t.phase());
    return;
  }
  out->set_in(t.call());
  out->set_waits_for(t.waits_for());
  out->set_category(std::string(CategoryName(t.category())));
  out->set_comm(t.comm());
  out->set_has_seq(t.has_seq());
  out->set_seq(t.seq());
  out->set_bytes(t.bytes());
  out->set_peer(t.peer());
  out->set_tag(t.tag());
}

// The operation a thread's call stands for: that of the request it waits
// for (MPI_Wait for an MPI_Irecv: MPI_Irecv), else the call itself.
const std::string& Operation(const v1::ThreadActivity& t) {
  return t.waits_for().empty() ? t.call() : t.waits_for();
}

// Point-to-point directions, by the MPI operation's name.
bool Sends(const std::string& call) {
  return absl::StrContains(call, "send") || absl::StrContains(call, "Send");
}
bool Receives(const std::string& call) {
  return absl::StrContains(call, "recv") || absl::StrContains(call, "Recv") ||
         absl::StrContains(call, "robe");  // MPI_Probe, MPI_Mprobe
}

// Whether `other` is in a call that matches `waiting`'s, which names it.
bool Matches(const Rank& waiting, const Rank& other) {
  if (!other.in_call || other.thread->has_seq()) return false;
  const v1::ThreadActivity& w = *waiting.thread;
  const v1::ThreadActivity& o = *other.thread;
  if (o.comm() != w.comm()) return false;
  const int32_t me = waiting.process->activity.rank();
  if (o.peer() >= 0 && o.peer() != me) return false;
  return (Sends(Operation(w)) && Receives(Operation(o))) ||
         (Receives(Operation(w)) && Sends(Operation(o)));
}

class Diagnosis {
 public:
  Diagnosis(const std::vector<LiveProcess>& processes, v1::HealthReply* reply)
      : reply_(reply) {
    for (const LiveProcess& p : processes) ranks_.push_back(Summarize(p));
    std::sort(ranks_.begin(), ranks_.end(), [](const Rank& a, const Rank& b) {
      return std::make_pair(a.process->activity.rank(),
                            a.process->activity.pid()) <
             std::make_pair(b.process->activity.rank(),
                            b.process->activity.pid());
    });
    for (const Rank& r : ranks_) {
      by_rank_.emplace(r.process->activity.rank(), &r);
    }
  }

  // Time since the job last made progress (any rank left a call); a rank
  // that never left one counts from its first call's entry.
  int64_t StalledFor() const {
    int64_t least = -1;
    for (const Rank& r : ranks_) {
      int64_t since = r.idle_ns;
      if (since < 0 && r.in_call) since = r.in_for_ns;
      if (since >= 0 && (least < 0 || since < least)) least = since;
    }
    return std::max<int64_t>(least, 0);
  }

  bool SomeoneWaits(int64_t stall_after_ns) const {
    for (const Rank& r : ranks_) {
      if (r.in_call && r.in_for_ns >= stall_after_ns) return true;
    }
    return false;
  }

  void Ranks() {
    for (const Rank& r : ranks_) Describe(r, reply_->add_ranks());
  }

  void Collectives() {
    // comm -> seq -> ranks in a collective there
    std::map<uint64_t, std::map<uint64_t, std::vector<const Rank*>>> at;
    for (const Rank& r : ranks_) {
      if (r.in_call && r.thread->has_seq()) {
        at[r.thread->comm()][r.thread->seq()].push_back(&r);
      }
    }
    for (const auto& [comm, by_seq] : at) {
      for (const auto& [seq, group] : by_seq) {
        // (call, bytes, root) -> ranks
        std::map<std::tuple<std::string, int64_t, int32_t>,
                 std::vector<const Rank*>>
            kinds;
        for (const Rank* r : group) {
          kinds[{Operation(*r->thread), r->thread->bytes(), r->thread->peer()}]
              .push_back(r);
        }
        if (kinds.size() > 1) {
          Mismatch(comm, seq, kinds);
          continue;
        }
        const uint32_t size = group.front()->thread->comm_size();
        if (group.size() < size) Missing(comm, seq, group, by_seq);
      }
    }
  }

  void PointToPoint() {
    std::set<std::pair<int32_t, int32_t>> done;  // (waiting, peer) reported
    for (const Rank& r : ranks_) {
      if (!r.in_call || r.thread->has_seq() || r.thread->peer() < 0) continue;
      // A send or a receive (blocking, or waited for): not one-sided
      // communication's calls, whose target takes no part.
      const std::string& op = Operation(*r.thread);
      if (!Sends(op) && !Receives(op)) continue;
      const int32_t me = r.process->activity.rank();
      const int32_t peer = r.thread->peer();
      if (done.count({me, peer})) continue;
      auto it = by_rank_.find(peer);
      if (it != by_rank_.end() && Matches(r, *it->second)) continue;
      std::vector<int32_t> waiting = {me};
      std::vector<int32_t> suspects = {peer};
      // The peer waiting on this rank too: one stall, both ways.
      if (it != by_rank_.end()) {
        const Rank& other = *it->second;
        if (other.in_call && !other.thread->has_seq() &&
            other.thread->peer() == me && !Matches(other, r)) {
          waiting.push_back(peer);
          suspects.push_back(me);
          done.insert({peer, me});
        }
      }
      done.insert({me, peer});
      v1::HealthStall* stall = reply_->add_stalls();
      stall->set_kind("p2p");
      stall->set_comm(r.thread->comm());
      stall->set_op(Operation(*r.thread));
      Fill(stall, std::move(waiting), std::move(suspects));
    }
  }

 private:
  void Mismatch(uint64_t comm, uint64_t seq,
                const std::map<std::tuple<std::string, int64_t, int32_t>,
                               std::vector<const Rank*>>& kinds) {
    // The kind most ranks are in waits; ties: the one whose first rank is
    // lowest.
    auto most = kinds.begin();
    for (auto it = kinds.begin(); it != kinds.end(); ++it) {
      if (it->second.size() > most->second.size() ||
          (it->second.size() == most->second.size() &&
           RankOf(it->second.front()) < RankOf(most->second.front()))) {
        most = it;
      }
    }
    std::vector<int32_t> waiting, suspects;
    for (auto it = kinds.begin(); it != kinds.end(); ++it) {
      for (const Rank* r : it->second) {
        (it == most ? waiting : suspects).push_back(RankOf(r));
      }
    }
    v1::HealthStall* stall = reply_->add_stalls();
    stall->set_kind("mismatch");
    stall->set_comm(comm);
    stall->set_seq(seq);
    stall->set_op(std::get<0>(most->first));
    Fill(stall, std::move(waiting), std::move(suspects));
  }

  void Missing(uint64_t comm, uint64_t seq,
               const std::vector<const Rank*>& group,
               const std::map<uint64_t, std::vector<const Rank*>>& by_seq) {
    std::set<int32_t> in;
    for (const Rank* r : group) in.insert(RankOf(r));
    // Ranks at a later collective of the communicator issued this one (a
    // non-blocking one's wait may come in any order): not suspects.
    std::set<int32_t> past;
    for (auto it = by_seq.upper_bound(seq); it != by_seq.end(); ++it) {
      for (const Rank* r : it->second) past.insert(RankOf(r));
    }
    std::vector<int32_t> suspects;
    if (group.front()->thread->comm_size() >= ranks_.size()) {
      for (const Rank& r : ranks_) {
        if (!in.count(RankOf(&r)) && !past.count(RankOf(&r))) {
          suspects.push_back(RankOf(&r));
        }
      }
    } else {
      for (const auto& [other_seq, others] : by_seq) {
        if (other_seq >= seq) break;
        for (const Rank* r : others) suspects.push_back(RankOf(r));
      }
    }
    v1::HealthStall* stall = reply_->add_stalls();
    stall->set_kind("missing");
    stall->set_comm(comm);
    stall->set_seq(seq);
    stall->set_op(Operation(*group.front()->thread));
    Fill(stall, std::vector<int32_t>(in.begin(), in.end()),
         std::move(suspects));
  }

  static int32_t RankOf(const Rank* r) { return r->process->activity.rank(); }

  void Fill(v1::HealthStall* stall, std::vector<int32_t> waiting,
            std::vector<int32_t> suspects) {
    std::sort(waiting.begin(), waiting.end());
    std::sort(suspects.begin(), suspects.end());
    std::set<int32_t> listed(waiting.begin(), waiting.end());
    listed.insert(suspects.begin(), suspects.end());
    for (int32_t w : waiting) stall->add_waiting_ranks(w);
    for (int32_t s : suspects) stall->add_suspect_ranks(s);
    for (int32_t rank : listed) {
      auto [first, last] = by_rank_.equal_range(rank);
      for (auto it = first; it != last; ++it) {
        Describe(*it->second, stall->add_ranks());
      }
    }
  }

  v1::HealthReply* reply_;
  std::vector<Rank> ranks_;
  std::multimap<int32_t, const Rank*> by_rank_;
};

}  // namespace

v1::HealthReply DiagnoseHealth(const std::string& job,
                               const std::vector<LiveProcess>& processes,
                               int64_t stall_after_ns) {
  v1::HealthReply reply;
  reply.set_job(job);
  reply.set_stall_after_ns(stall_after_ns);
  Diagnosis diagnosis(processes, &reply);
  diagnosis.Ranks();
  const int64_t stalled_for = diagnosis.StalledFor();
  if (stalled_for < stall_after_ns || !diagnosis.SomeoneWaits(stall_after_ns)) {
    reply.set_state("running");
    return reply;
  }
  reply.set_state("stalled");
  reply.set_stalled_for_ns(stalled_for);
  diagnosis.Collectives();
  diagnosis.PointToPoint();
  return reply;
}

}  // namespace meridian
