#include "query/analysis/wait_states.h"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/types/span.h"

namespace meridian {
namespace {

bool IsSend(SpanRole role) {
  return role == SpanRole::kSend || role == SpanRole::kSendRecv;
}

// The pattern of a collective's wait: by the role of the collective span
// (the waiter's, or, for an MPI_Wait that completes a non-blocking one, the
// span it waited for).
const char* CollectivePattern(SpanRole role, const std::string& name) {
  switch (role) {
    case SpanRole::kAllToAll:
      return absl::StrContains(absl::AsciiStrToLower(name), "barrier")
                 ? "wait_at_barrier"
                 : "wait_at_nxn";
    case SpanRole::kRootOut:
      return "late_broadcast";
    case SpanRole::kRootIn:
      return "early_reduce";
    default:
      return "other_collective";
  }
}

struct Wait {
  int32_t waiter = -1;   // span
  int32_t awaited = -1;  // span
  int64_t start = 0, end = 0;
  const char* pattern = nullptr;
};

// A part of a wait, charged to a rank and what it did: the operation index
// of its span (kUntraced: none).
struct Charge {
  int32_t rank;
  int32_t op;
  int64_t ns;
  bool direct;
};
constexpr int32_t kUntraced = -1;

// One (pattern, rank, step) being tallied.
struct Tallied {
  int64_t wait_ns = 0;
  int64_t instances = 0;
  std::vector<WaitCause> causes;  // filled at the end
};

class Analysis {
 public:
  explicit Analysis(const DependencyGraph& graph)
      : graph_(graph),
        spans_(graph.spans()),
        all_(spans_.spans()),
        is_waiter_(all_.size(), false),
        by_track_(spans_.tracks().size()) {}

  void FindWaits() {
    for (size_t i = 0; i < all_.size(); ++i) {
      const JobSpan& w = all_[i];
      const int32_t j = graph_.end_binding(static_cast<int64_t>(i));
      if (j < 0 || w.async || w.rank < 0 || !OnThread(w)) continue;
      const JobSpan& a = all_[j];
      if (a.rank < 0 || a.rank == w.rank) continue;
      if (absl::StartsWith(spans_.name(w), "MPI_Win_")) continue;  // epochs
      const char* pattern = nullptr;
      if (IsCollective(w.role)) {
        pattern = CollectivePattern(w.role, spans_.name(w));
      } else if (w.role == SpanRole::kWait && IsCollective(a.role)) {
        pattern = CollectivePattern(a.role, spans_.name(a));
      } else if (IsSend(a.role)) {
        pattern = "late_sender";
      } else {
        continue;  // one-sided epochs, GPU edges
      }
      Add(static_cast<int32_t>(i), j, pattern);
    }
    for (const auto& [send, recv] : graph_.mpi().messages()) {
      const JobSpan& s = all_[send];
      const JobSpan& r = all_[recv];
      if (s.async || s.role != SpanRole::kSend || r.rank == s.rank ||
          s.category != v1::CATEGORY_MPI || !OnThread(s) ||
          spans_.name(s) == "MPI_Bsend") {  // buffered: never waits
        continue;
      }
      if (r.start > s.start && s.end >= r.start) {
        Add(send, recv, "late_receiver");
      }
    }
    by_track_waiter_.resize(by_track_.size());
    for (size_t t = 0; t < by_track_.size(); ++t) {
      std::vector<int32_t>& waits = by_track_[t];
      std::sort(waits.begin(), waits.end(), [this](int32_t x, int32_t y) {
        return waits_[x].waiter < waits_[y].waiter;
      });
      for (int32_t w : waits) by_track_waiter_[t].push_back(waits_[w].waiter);
    }
  }

  WaitStatesResult Tally(
      bool by_step, const std::optional<std::pair<int64_t, int64_t>>& steps) {
    // (pattern, rank, step or kNoStep): patterns are the string constants
    // above, compared by address here, by name once sorted.
    constexpr int64_t kNoStep = INT64_MIN;
    using Key = std::tuple<const char*, int32_t, int64_t>;
    absl::flat_hash_map<Key, uint32_t> entry_of;
    std::vector<Key> keys;
    std::vector<Tallied> entries;
    // (entry, rank, op): ns.
    absl::flat_hash_map<std::tuple<uint32_t, int32_t, int32_t>, int64_t> causes;
    std::map<int32_t, RankWaits> ranks;
    for (int32_t rank : spans_.Ranks()) ranks[rank].rank = rank;
    std::vector<Charge> charges;
    auto add = [&](const Key& key, int64_t ns) {
      auto [it, added] =
          entry_of.try_emplace(key, static_cast<uint32_t>(entries.size()));
      if (added) {
        keys.push_back(key);
        entries.emplace_back();
      }
      Tallied& t = entries[it->second];
      t.wait_ns += ns;
      ++t.instances;
      for (const Charge& c : charges) {
        causes[std::make_tuple(it->second, c.rank, c.op)] += c.ns;
      }
    };
    for (const Wait& w : waits_) {
      const JobSpan& waiter = all_[w.waiter];
      if (steps && (!waiter.has_step || waiter.step < steps->first ||
                    waiter.step > steps->second)) {
        continue;  // a load of some steps holds others' spans too
      }
      const int64_t ns = w.end - w.start;
      charges.clear();
      Attribute(w.awaited, w.start, w.end, 0, &charges);
      if (!steps) add(Key(w.pattern, waiter.rank, kNoStep), ns);
      if ((by_step || steps) && waiter.has_step) {
        add(Key(w.pattern, waiter.rank, waiter.step), ns);
      }
      RankWaits& r = ranks[waiter.rank];
      r.rank = waiter.rank;
      r.wait_ns += ns;
      for (const Charge& c : charges) {
        RankWaits& by = ranks[c.rank];
        by.rank = c.rank;
        (c.direct ? by.short_term_ns : by.long_term_ns) += c.ns;
      }
    }
    for (const auto& [at, ns] : causes) {
      const int32_t op = std::get<2>(at);
      entries[std::get<0>(at)].causes.push_back(
          {std::get<1>(at),
           op == kUntraced ? "untraced" : spans_.catalog().ops[op].name, ns});
    }
    WaitStatesResult result;
    for (size_t i = 0; i < entries.size(); ++i) {
      Tallied& t = entries[i];
      WaitPatternEntry& e = result.patterns.emplace_back();
      e.pattern = std::get<0>(keys[i]);
      e.rank = std::get<1>(keys[i]);
      if (std::get<2>(keys[i]) != kNoStep) e.step = std::get<2>(keys[i]);
      e.wait_ns = t.wait_ns;
      e.instances = t.instances;
      std::sort(t.causes.begin(), t.causes.end(),
                [](const WaitCause& x, const WaitCause& y) {
                  return std::tie(y.ns, x.rank, x.in) <
                         std::tie(x.ns, y.rank, y.in);
                });
      if (t.causes.size() > kMaxCauses) t.causes.resize(kMaxCauses);
      e.caused_by = std::move(t.causes);
    }
    // Most waiting first; then by pattern, rank, step (the job's total
    // before its steps).
    std::sort(result.patterns.begin(), result.patterns.end(),
              [](const WaitPatternEntry& x, const WaitPatternEntry& y) {
                if (x.wait_ns != y.wait_ns) return x.wait_ns > y.wait_ns;
                if (x.pattern != y.pattern) return x.pattern < y.pattern;
                if (x.rank != y.rank) return x.rank < y.rank;
                return x.step < y.step;
              });
    for (auto& [rank, r] : ranks) result.ranks.push_back(r);
    return result;
  }

 private:
  void Add(int32_t waiter, int32_t awaited, const char* pattern) {
    const JobSpan& w = all_[waiter];
    const int64_t end = std::min(all_[awaited].start, w.end);
    if (end <= w.start) return;
    waits_.push_back({waiter, awaited, w.start, end, pattern});
    is_waiter_[waiter] = true;
    by_track_[w.track].push_back(static_cast<int32_t>(waits_.size() - 1));
  }

  // Charges [s, e] of a wait for span `awaited`: where the awaited span's
  // track was itself waiting then, to whom it waited for (one link deeper);
  // the rest to the awaited span's rank, in what it did.
  void Attribute(int32_t awaited, int64_t s, int64_t e, int depth,
                 std::vector<Charge>* out) const {
    const JobSpan& a = all_[awaited];
    int64_t covered = 0;
    if (depth < kMaxChain) {
      const std::vector<int32_t>& waits = by_track_[a.track];
      const std::vector<int32_t>& waiters = by_track_waiter_[a.track];
      // A track's waits are its blocking calls': one at a time, so sorted
      // by start (their spans' order) they are by end too. Those before
      // the awaited span (no later one can reach e <= its start), back
      // while they end after s:
      size_t hi = static_cast<size_t>(
          std::lower_bound(waiters.begin(), waiters.end(), awaited) -
          waiters.begin());
      size_t lo = hi;
      while (lo > 0 && waits_[waits[lo - 1]].end > s) --lo;
      int64_t cursor = s;
      for (size_t i = lo; i < hi && waits_[waits[i]].start < e; ++i) {
        const Wait& w = waits_[waits[i]];
        const int64_t from = std::max(w.start, cursor);
        const int64_t to = std::min(w.end, e);
        if (to <= from) continue;
        Attribute(w.awaited, from, to, depth + 1, out);
        covered += to - from;
        cursor = to;
      }
    }
    if (e - s - covered > 0) {
      out->push_back(
          {a.rank, Activity(awaited, s, e), e - s - covered, depth == 0});
    }
  }

  // What the awaited span's track did in [s, e]: of the graph's pieces
  // (the innermost span owning each instant), the operation owning most of
  // it, the pieces of its waits left out (their time went down the chain);
  // kUntraced if untraced time owns most, or nothing else is there. At
  // most kPieces pieces are looked at.
  int32_t Activity(int32_t awaited, int64_t s, int64_t e) const {
    constexpr int kPieces = 256;
    absl::Span<const DependencyGraph::Piece> pieces =
        graph_.pieces(all_[awaited].track);
    auto it = std::partition_point(
        pieces.begin(), pieces.end(),
        [s](const DependencyGraph::Piece& p) { return p.t1 <= s; });
    std::vector<std::pair<int32_t, int64_t>> ops;  // (op, ns)
    for (int n = 0; it != pieces.end() && it->t0 < e && n < kPieces;
         ++it, ++n) {
      if (it->span >= 0 && is_waiter_[it->span]) continue;
      const int32_t op = it->span < 0 ? kUntraced : all_[it->span].op;
      const int64_t ns = std::min(it->t1, e) - std::max(it->t0, s);
      auto at = std::find_if(ops.begin(), ops.end(),
                             [op](const auto& o) { return o.first == op; });
      if (at == ops.end()) {
        ops.emplace_back(op, ns);
      } else {
        at->second += ns;
      }
    }
    int32_t best = kUntraced;
    int64_t most = 0;
    for (const auto& [op, ns] : ops) {
      if (ns > most) most = ns, best = op;
    }
    return best;
  }

  // Whether a span is on a CPU thread: the calls a rank blocks in. (c10d's
  // queue spans run beside its threads, from a call until the backend's
  // work is done; GPU spans are the device's.)
  bool OnThread(const JobSpan& span) const {
    return spans_.tracks()[span.track].kind == v1::TRACK_KIND_THREAD;
  }

  const DependencyGraph& graph_;
  const JobSpans& spans_;
  const std::vector<JobSpan>& all_;
  std::vector<Wait> waits_;
  std::vector<bool> is_waiter_;
  std::vector<std::vector<int32_t>> by_track_;         // waits, by start
  std::vector<std::vector<int32_t>> by_track_waiter_;  // their waiting spans
};

}  // namespace

WaitStatesResult WaitStates(
    const DependencyGraph& graph, bool by_step,
    const std::optional<std::pair<int64_t, int64_t>>& steps) {
  Analysis analysis(graph);
  analysis.FindWaits();
  return analysis.Tally(by_step, steps);
}

}  // namespace meridian
