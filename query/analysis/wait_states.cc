#include "query/analysis/wait_states.h"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

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

// One (pattern, rank, step) being tallied, its causes merged as they come
// (few per entry: a linear search).
struct Tallied {
  int64_t wait_ns = 0;
  int64_t instances = 0;
  std::vector<Charge> causes;  // direct unused

  void Add(int64_t ns, const std::vector<Charge>& charges) {
    wait_ns += ns;
    ++instances;
    for (const Charge& c : charges) {
      auto it = std::find_if(
          causes.begin(), causes.end(),
          [&c](const Charge& x) { return x.rank == c.rank && x.op == c.op; });
      if (it == causes.end()) {
        causes.push_back({c.rank, c.op, c.ns, false});
      } else {
        it->ns += c.ns;
      }
    }
  }
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
      if (j < 0 || w.async || w.rank < 0) continue;
      const JobSpan& a = all_[j];
      if (a.rank < 0 || a.rank == w.rank) continue;
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
      if (s.async || s.role != SpanRole::kSend || r.rank == s.rank) continue;
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

  WaitStatesResult Tally(bool by_step) {
    // (pattern, rank, step or kNoStep): patterns are the string constants
    // above, compared by address here, by name once sorted.
    constexpr int64_t kNoStep = INT64_MIN;
    using Key = std::tuple<const char*, int32_t, int64_t>;
    absl::flat_hash_map<Key, Tallied> entries;
    std::map<int32_t, RankWaits> ranks;
    for (int32_t rank : spans_.Ranks()) ranks[rank].rank = rank;
    std::vector<Charge> charges;
    for (const Wait& w : waits_) {
      const JobSpan& waiter = all_[w.waiter];
      const int64_t ns = w.end - w.start;
      charges.clear();
      Attribute(w.awaited, w.start, w.end, 0, &charges);
      entries[Key(w.pattern, waiter.rank, kNoStep)].Add(ns, charges);
      if (by_step && waiter.has_step) {
        entries[Key(w.pattern, waiter.rank, waiter.step)].Add(ns, charges);
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
    WaitStatesResult result;
    for (auto& [key, t] : entries) {
      WaitPatternEntry& e = result.patterns.emplace_back();
      e.pattern = std::get<0>(key);
      e.rank = std::get<1>(key);
      if (std::get<2>(key) != kNoStep) e.step = std::get<2>(key);
      e.wait_ns = t.wait_ns;
      e.instances = t.instances;
      std::sort(t.causes.begin(), t.causes.end(),
                [](const Charge& x, const Charge& y) {
                  return std::tie(y.ns, x.rank, x.op) <
                         std::tie(x.ns, y.rank, y.op);
                });
      for (size_t i = 0; i < t.causes.size() && i < kMaxCauses; ++i) {
        const Charge& c = t.causes[i];
        e.caused_by.push_back(
            {c.rank,
             c.op == kUntraced ? "untraced" : spans_.catalog().ops[c.op].name,
             c.ns});
      }
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

  // What the awaited span's track did in [s, e] before it: the operation of
  // the span ending by the awaited start, not a wait, that overlaps [s, e]
  // most (kUntraced if none).
  int32_t Activity(int32_t awaited, int64_t s, int64_t e) const {
    const JobSpan& a = all_[awaited];
    const JobTrack& track = spans_.tracks()[a.track];
    int64_t best = 0;
    int32_t best_at = -1;
    constexpr int kLookBack = 64;
    for (int64_t i = awaited - 1, n = 0; i >= track.first && n < kLookBack;
         --i, ++n) {
      const JobSpan& x = all_[i];
      if (x.end <= s) break;  // and every sibling before it
      if (x.end > a.start || is_waiter_[i] || x.async) continue;
      const int64_t overlap = std::min(x.end, e) - std::max(x.start, s);
      if (overlap > best) {
        best = overlap;
        best_at = static_cast<int32_t>(i);
      }
    }
    return best_at < 0 ? kUntraced : all_[best_at].op;
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

WaitStatesResult WaitStates(const DependencyGraph& graph, bool by_step) {
  Analysis analysis(graph);
  analysis.FindWaits();
  return analysis.Tally(by_step);
}

}  // namespace meridian
