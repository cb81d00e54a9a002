#include "query/analysis/wait_states.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

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

struct Charge {
  int32_t rank;
  std::string in;
  int64_t ns;
  bool direct;
};

class Analysis {
 public:
  explicit Analysis(const DependencyGraph& graph)
      : graph_(graph),
        spans_(graph.spans()),
        all_(spans_.spans()),
        is_waiter_(all_.size(), false),
        by_track_(spans_.tracks().size()),
        longest_(spans_.tracks().size(), 0) {}

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
    for (std::vector<int32_t>& waits : by_track_) {
      std::sort(waits.begin(), waits.end(), [this](int32_t x, int32_t y) {
        return waits_[x].start < waits_[y].start;
      });
    }
  }

  WaitStatesResult Tally(bool by_step) {
    using Key = std::tuple<std::string, int32_t, std::optional<int64_t>>;
    std::map<Key, WaitPatternEntry> entries;
    std::map<Key, std::map<std::pair<int32_t, std::string>, int64_t>> causes;
    std::map<int32_t, RankWaits> ranks;
    for (int32_t rank : spans_.Ranks()) ranks[rank].rank = rank;
    for (const Wait& w : waits_) {
      const JobSpan& waiter = all_[w.waiter];
      const int64_t ns = w.end - w.start;
      std::vector<Charge> charges;
      Attribute(w.awaited, w.start, w.end, 0, &charges);
      std::vector<Key> keys = {Key(w.pattern, waiter.rank, std::nullopt)};
      if (by_step && waiter.has_step) {
        keys.emplace_back(w.pattern, waiter.rank, waiter.step);
      }
      for (const Key& key : keys) {
        WaitPatternEntry& e = entries[key];
        e.pattern = w.pattern;
        e.rank = waiter.rank;
        e.step = std::get<2>(key);
        e.wait_ns += ns;
        ++e.instances;
        for (const Charge& c : charges) causes[key][{c.rank, c.in}] += c.ns;
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
    for (auto& [key, entry] : entries) {
      for (const auto& [who, ns] : causes[key]) {
        entry.caused_by.push_back({who.first, who.second, ns});
      }
      std::stable_sort(
          entry.caused_by.begin(), entry.caused_by.end(),
          [](const WaitCause& x, const WaitCause& y) { return x.ns > y.ns; });
      if (entry.caused_by.size() > kMaxCauses) {
        entry.caused_by.resize(kMaxCauses);
      }
      result.patterns.push_back(std::move(entry));
    }
    // `entries` is ordered by (pattern, rank, step): a stable sort by wait
    // keeps that order among equals.
    std::stable_sort(result.patterns.begin(), result.patterns.end(),
                     [](const WaitPatternEntry& x, const WaitPatternEntry& y) {
                       return x.wait_ns > y.wait_ns;
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
    longest_[w.track] = std::max(longest_[w.track], end - w.start);
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
      // The first wait that can reach s: none starts before s - longest.
      auto it = std::lower_bound(
          waits.begin(), waits.end(), s - longest_[a.track],
          [this](int32_t w, int64_t t) { return waits_[w].start < t; });
      int64_t cursor = s;
      for (; it != waits.end() && waits_[*it].start < e; ++it) {
        const Wait& w = waits_[*it];
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

  // What the awaited span's track did in [s, e] before it: the span ending
  // by the awaited start, not a wait, that overlaps [s, e] most.
  std::string Activity(int32_t awaited, int64_t s, int64_t e) const {
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
    return best_at < 0 ? "untraced" : spans_.name(all_[best_at]);
  }

  const DependencyGraph& graph_;
  const JobSpans& spans_;
  const std::vector<JobSpan>& all_;
  std::vector<Wait> waits_;
  std::vector<bool> is_waiter_;
  std::vector<std::vector<int32_t>> by_track_;  // waits, by start
  std::vector<int64_t> longest_;                // per track, its longest wait
};

}  // namespace

WaitStatesResult WaitStates(const DependencyGraph& graph, bool by_step) {
  Analysis analysis(graph);
  analysis.FindWaits();
  return analysis.Tally(by_step);
}

}  // namespace meridian
