#include "query/analysis/replay.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "query/ops/category.h"

namespace meridian {
namespace {

using Piece = DependencyGraph::Piece;

bool IsCompute(const JobSpan& s) {
  return !IsCommunication(s.category) && s.role != SpanRole::kSync;
}

// No scaled or modelled time exceeds this (about 11.6 days): a factor or a
// stored duration from a client cannot overflow the sums of a track.
constexpr double kMaxScaledNs = 1e15;

int64_t Scaled(int64_t ns, double factor) {
  if (factor == 1) return ns;
  return std::llround(std::min(static_cast<double>(ns) * factor, kMaxScaledNs));
}

// A time on a track that a dependency needs: the track must have reached
// `need` (Simulator's state: 2 x pieces done + 1 once the next one has
// started) before its replayed time can be read (Simulator::TimeAt). `piece`
// is the last piece of the track starting at or before the time (0 if none
// does). No track (-1): the time is not replayed, and always available.
struct Point {
  int32_t track = -1;
  int64_t need = 0;
  size_t piece = 0;
};

// The last of `pieces` starting at or before t, or 0 if none does.
size_t PieceAt(absl::Span<const Piece> pieces, int64_t t) {
  auto it = std::upper_bound(
      pieces.begin(), pieces.end(), t,
      [](int64_t time, const Piece& piece) { return time < piece.t0; });
  return it == pieces.begin() ? 0 : (it - pieces.begin()) - 1;
}

class Simulator {
 public:
  Simulator(const DependencyGraph& graph, const ReplayChanges& changes)
      : graph_(graph),
        spans_(graph.spans()),
        all_(graph.spans().spans()),
        tracks_(graph.spans().tracks()),
        changes_(changes) {}

  absl::Status Prepare();
  ReplayTimes Run();

 private:
  // Compute time per (rank, GPU track?, step, op; -1: untraced).
  using ComputeKey = std::tuple<int32_t, bool, int64_t, int32_t>;
  static constexpr int64_t kNoStep = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kAllSteps = kNoStep + 1;

  bool Gpu(int32_t track) const {
    return tracks_[track].kind == v1::TRACK_KIND_GPU_STREAM;
  }
  int64_t Global(int32_t track, int64_t q) const {
    return piece_base_[track] + q;
  }
  // Where time `t` of `track`, as a start, is replayed (see Point).
  Point StartPoint(int32_t track, int64_t t) const;
  // The replayed time of `t` at `point` (StartPoint's), once Available.
  int64_t TimeAt(const Point& point, int64_t t) const {
    return point.track < 0 ? t : MapStartIn(point.track, point.piece, t);
  }
  // The replayed time of `t` of `track` as a start, where piece q is the
  // last piece starting at or before t (or the first).
  int64_t MapStartIn(int32_t track, size_t q, int64_t t) const;
  Point EndPoint(int32_t track, int64_t t) const;
  // The predicted time of `t` as an end; no piece before `from` ends at or
  // after t.
  int64_t MapEnd(int32_t track, int64_t t, size_t from = 0) const;
  bool Available(const Point& p) const {
    return p.track < 0 || state_[p.track] >= p.need;
  }

  void BuildGroups();
  void BuildRankLike();
  // The rank-like factor of compute of `op` (-1: untraced) on `track`.
  double RankFactor(int32_t track, int64_t step, int32_t op) const;
  // Piece q of track k's own time (before arrivals).
  int64_t OwnTime(int32_t k, int64_t q) const;
  // Advances track k as far as its dependencies allow.
  void Advance(int32_t k);
  // Whether piece q of track k (the last of span x) can end; if so its
  // predicted end in *end. Otherwise it registered k as waiting.
  bool EndWithArrivals(int32_t k, int64_t q, int32_t x, int64_t* end);
  // Group g's latest measured and predicted start, once every start is
  // available (or skipped when forced); false after registering `waiter`.
  bool GroupArrival(int64_t g, int32_t waiter);
  void Wait(int32_t waiter, const Point& p);
  void Wake(int32_t k);
  std::optional<int64_t> ModelTime(int32_t x) const;

  const DependencyGraph& graph_;
  const JobSpans& spans_;
  const std::vector<JobSpan>& all_;
  const std::vector<JobTrack>& tracks_;
  const ReplayChanges& changes_;

  std::vector<double> op_factor_;  // per catalog op
  std::vector<char> op_scaled_;
  absl::flat_hash_map<int32_t, int32_t> like_;  // rank R -> rank S
  absl::flat_hash_map<ComputeKey, int64_t> compute_ns_;
  std::vector<int32_t> instance_ranks_;  // per span, with a model

  // Groups (MpiMatching's): their starts, and per span the groups it ends.
  std::vector<int64_t> group_first_;
  std::vector<int32_t> group_starts_;
  std::vector<int64_t> ends_first_;
  std::vector<int64_t> ends_groups_;
  struct GroupState {
    int64_t scanned = 0;  // starts looked at
    int64_t measured = std::numeric_limits<int64_t>::min();
    int64_t predicted = std::numeric_limits<int64_t>::min();
  };
  std::vector<GroupState> group_state_;

  std::vector<int64_t> piece_base_;  // per track, and one past the last
  // Per track: the CPU thread it follows across untraced time, or -1.
  std::vector<int32_t> lead_;
  std::vector<int64_t> p0_, p1_, own_;
  std::vector<int64_t> state_;  // per track
  std::vector<int64_t> step_;   // per track: the step of its last piece
  std::vector<char> force_;     // per track: drop what is not available
  std::vector<char> queued_;
  std::vector<int32_t> run_;
  // Per track: (need, waiting track), a min-heap.
  std::vector<std::vector<std::pair<int64_t, int32_t>>> waiters_;
  int64_t broken_ = 0;
};

absl::Status Simulator::Prepare() {
  if (absl::Status s = CheckChanges(changes_); !s.ok()) return s;
  const JobCatalog& catalog = spans_.catalog();
  op_factor_.assign(catalog.ops.size(), 1.0);
  op_scaled_.assign(catalog.ops.size(), 0);
  for (size_t op = 0; op < catalog.ops.size(); ++op) {
    const std::string category(CategoryName(catalog.ops[op].category));
    for (const ReplayChanges::Scale& scale : changes_.scales) {
      if (scale.pattern == category ||
          fnmatch(scale.pattern.c_str(), catalog.ops[op].name.c_str(), 0) ==
              0) {
        op_factor_[op] *= scale.factor;
        op_scaled_[op] = 1;
      }
    }
  }
  const std::vector<int32_t> ranks = spans_.Ranks();
  for (const auto& [r, s] : changes_.rank_like) {
    for (int32_t rank : {r, s}) {
      if (!std::binary_search(ranks.begin(), ranks.end(), rank)) {
        return absl::NotFoundError(absl::StrCat(
            "--rank-like ", r, "=", s, ": the job has no spans of rank ", rank,
            " (it has ", ranks.size(), " ranks)"));
      }
    }
    like_[r] = s;
  }
  piece_base_.assign(tracks_.size() + 1, 0);
  for (size_t k = 0; k < tracks_.size(); ++k) {
    piece_base_[k + 1] =
        piece_base_[k] +
        static_cast<int64_t>(graph_.pieces(static_cast<int32_t>(k)).size());
  }
  // Each process's first CPU thread leads its other CPU threads.
  lead_.assign(tracks_.size(), -1);
  absl::flat_hash_map<int32_t, int32_t> first_thread;
  for (size_t k = 0; k < tracks_.size(); ++k) {
    if (Gpu(static_cast<int32_t>(k)) || tracks_[k].process < 0) continue;
    auto [it, added] =
        first_thread.try_emplace(tracks_[k].process, static_cast<int32_t>(k));
    if (!added) lead_[k] = it->second;
  }
  BuildGroups();
  if (!like_.empty()) BuildRankLike();
  if (changes_.comm_model) {
    instance_ranks_.assign(all_.size(), 0);
    const MpiMatching& mpi = graph_.mpi();
    for (int64_t i = 0; i < mpi.instances(); ++i) {
      for (int32_t m : mpi.members(i)) {
        instance_ranks_[m] = static_cast<int32_t>(mpi.members(i).size());
      }
    }
  }
  return absl::OkStatus();
}

void Simulator::BuildGroups() {
  std::vector<std::pair<int32_t, int64_t>> ends;  // (span, group)
  group_first_.push_back(0);
  graph_.mpi().ForEachGroup([&](const MpiMatching::Group& group) {
    const int64_t g = static_cast<int64_t>(group_first_.size()) - 1;
    group_starts_.insert(group_starts_.end(), group.starts.begin(),
                         group.starts.end());
    group_first_.push_back(static_cast<int64_t>(group_starts_.size()));
    for (int32_t e : group.ends) ends.emplace_back(e, g);
  });
  group_state_.resize(group_first_.size() - 1);
  ends_first_.assign(all_.size() + 1, 0);
  for (const auto& [span, g] : ends) ++ends_first_[span + 1];
  for (size_t i = 0; i < all_.size(); ++i) ends_first_[i + 1] += ends_first_[i];
  ends_groups_.resize(ends.size());
  std::vector<int64_t> at(ends_first_.begin(), ends_first_.end() - 1);
  for (const auto& [span, g] : ends) ends_groups_[at[span]++] = g;
}

void Simulator::BuildRankLike() {
  absl::flat_hash_set<int32_t> wanted;
  for (const auto& [r, s] : like_) {
    wanted.insert(r);
    wanted.insert(s);
  }
  for (size_t k = 0; k < tracks_.size(); ++k) {
    const int32_t rank = tracks_[k].rank;
    if (!wanted.contains(rank)) continue;
    const bool gpu = Gpu(static_cast<int32_t>(k));
    int64_t step = kNoStep;
    for (const Piece& p : graph_.pieces(static_cast<int32_t>(k))) {
      if (p.span >= 0 && all_[p.span].has_step) step = all_[p.span].step;
      const bool compute = p.span >= 0 ? IsCompute(all_[p.span]) : !gpu;
      if (!compute) continue;
      const int32_t op = p.span >= 0 ? all_[p.span].op : -1;
      compute_ns_[{rank, gpu, step, op}] += p.t1 - p.t0;
      compute_ns_[{rank, gpu, kAllSteps, op}] += p.t1 - p.t0;
    }
  }
}

double Simulator::RankFactor(int32_t track, int64_t step, int32_t op) const {
  if (like_.empty()) return 1;
  const int32_t rank = tracks_[track].rank;
  auto like = like_.find(rank);
  if (like == like_.end()) return 1;
  const bool gpu = Gpu(track);
  for (int64_t key : {step, kAllSteps}) {
    auto r = compute_ns_.find({rank, gpu, key, op});
    auto s = compute_ns_.find({like->second, gpu, key, op});
    if (r != compute_ns_.end() && s != compute_ns_.end() && r->second > 0) {
      return static_cast<double>(s->second) / static_cast<double>(r->second);
    }
  }
  return 1;
}

std::optional<int64_t> Simulator::ModelTime(int32_t x) const {
  if (!changes_.comm_model) return std::nullopt;
  const JobSpan& s = all_[x];
  const std::optional<int64_t> t = ModelTimeNs(
      *changes_.comm_model, s.category, spans_.name(s), s.role, s.bytes,
      instance_ranks_[x], static_cast<int32_t>(spans_.sources(s).size()));
  if (!t) return t;
  return std::min<int64_t>(*t, static_cast<int64_t>(kMaxScaledNs));
}

int64_t Simulator::OwnTime(int32_t k, int64_t q) const {
  const absl::Span<const Piece> pieces = graph_.pieces(k);
  const Piece& p = pieces[q];
  const int64_t base = p.t1 - p.t0;
  if (p.span < 0) {
    if (lead_[k] >= 0) return 0;  // its lead places the next span (Advance)
    if (!Gpu(k)) return Scaled(base, RankFactor(k, step_[k], -1));
    // Idle time on a stream before a launched kernel: the launch explains
    // it (Advance).
    const bool launched = q + 1 < static_cast<int64_t>(pieces.size()) &&
                          pieces[q + 1].span >= 0 &&
                          graph_.launch(pieces[q + 1].span) >= 0;
    return launched ? 0 : base;
  }
  const JobSpan& x = all_[p.span];
  double factor = op_factor_[x.op];
  if (IsCompute(x)) factor *= RankFactor(k, step_[k], x.op);
  return Scaled(base, factor);
}

Point Simulator::StartPoint(int32_t track, int64_t t) const {
  const absl::Span<const Piece> pieces = graph_.pieces(track);
  if (pieces.empty()) return {};
  const size_t q = PieceAt(pieces, t);
  const int64_t i = static_cast<int64_t>(q);
  if (t < pieces[0].t0) return {track, 1, q};
  return {track, t < pieces[q].t1 ? 2 * i + 1 : 2 * i + 2, q};
}

int64_t Simulator::MapStartIn(int32_t track, size_t q, int64_t t) const {
  const absl::Span<const Piece> pieces = graph_.pieces(track);
  if (pieces.empty()) return t;
  if (t < pieces[0].t0) return t + (p0_[Global(track, 0)] - pieces[0].t0);
  const Piece& p = pieces[q];
  const int64_t g = Global(track, q);
  if (t >= p.t1) return p1_[g] + (t - p.t1);
  if (t == p.t0) return p0_[g];
  const double f =
      static_cast<double>(own_[g]) / static_cast<double>(p.t1 - p.t0);
  return p0_[g] + Scaled(t - p.t0, f);
}

Point Simulator::EndPoint(int32_t track, int64_t t) const {
  const absl::Span<const Piece> pieces = graph_.pieces(track);
  if (pieces.empty()) return {};
  auto it = std::lower_bound(
      pieces.begin(), pieces.end(), t,
      [](const Piece& piece, int64_t time) { return piece.t1 < time; });
  if (it == pieces.end()) {
    return {track, 2 * static_cast<int64_t>(pieces.size())};
  }
  const int64_t q = it - pieces.begin();
  if (t == it->t1) return {track, 2 * q + 2};
  return StartPoint(track, t);
}

int64_t Simulator::MapEnd(int32_t track, int64_t t, size_t from) const {
  const absl::Span<const Piece> pieces = graph_.pieces(track);
  if (pieces.empty()) return t;
  auto it = std::lower_bound(
      pieces.begin() + std::min(from, pieces.size()), pieces.end(), t,
      [](const Piece& piece, int64_t time) { return piece.t1 < time; });
  if (it == pieces.end()) {
    const int64_t last = Global(track, pieces.size() - 1);
    return p1_[last] + (t - pieces.back().t1);
  }
  if (t == it->t1) return p1_[Global(track, it - pieces.begin())];
  return MapStartIn(track, PieceAt(pieces, t), t);
}

void Simulator::Wait(int32_t waiter, const Point& p) {
  auto& heap = waiters_[p.track];
  heap.emplace_back(p.need, waiter);
  std::push_heap(heap.begin(), heap.end(), std::greater<>());
}

void Simulator::Wake(int32_t k) {
  auto& heap = waiters_[k];
  while (!heap.empty() && heap.front().first <= state_[k]) {
    const int32_t waiter = heap.front().second;
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    heap.pop_back();
    if (!queued_[waiter]) {
      queued_[waiter] = 1;
      run_.push_back(waiter);
    }
  }
}

bool Simulator::GroupArrival(int64_t g, int32_t waiter) {
  GroupState& s = group_state_[g];
  const int64_t first = group_first_[g];
  const int64_t count = group_first_[g + 1] - first;
  for (; s.scanned < count; ++s.scanned) {
    const JobSpan& start = all_[group_starts_[first + s.scanned]];
    const Point p = StartPoint(start.track, start.start);
    if (!Available(p)) {
      if (!force_[waiter]) {
        Wait(waiter, p);
        return false;
      }
      ++broken_;
      continue;
    }
    s.measured = std::max(s.measured, start.start);
    s.predicted = std::max(s.predicted, TimeAt(p, start.start));
  }
  return true;
}

bool Simulator::EndWithArrivals(int32_t k, int64_t q, int32_t x, int64_t* end) {
  const Piece& p = graph_.pieces(k)[q];
  const JobSpan& span = all_[x];
  const int64_t g = Global(k, q);
  int64_t measured = std::numeric_limits<int64_t>::min();
  int64_t predicted = std::numeric_limits<int64_t>::min();
  std::optional<int64_t> model;
  auto add_groups = [&](int32_t of) {
    for (int64_t i = ends_first_[of]; i < ends_first_[of + 1]; ++i) {
      const int64_t group = ends_groups_[i];
      if (!GroupArrival(group, k)) return false;
      measured = std::max(measured, group_state_[group].measured);
      predicted = std::max(predicted, group_state_[group].predicted);
    }
    return true;
  };
  if (span.role == SpanRole::kWait) {
    for (int32_t a : graph_.Completes(x)) {
      if (!add_groups(a)) return false;
      if (ends_first_[a] < ends_first_[a + 1]) {
        const std::optional<int64_t> m = ModelTime(a);
        if (m) model = std::max(model.value_or(0), *m);
      }
    }
  } else if (span.role == SpanRole::kSync) {
    const std::vector<int32_t> gpu = graph_.Completes(x);
    if (!gpu.empty()) {
      const JobSpan& done = all_[gpu[0]];
      const Point point = EndPoint(done.track, done.end);
      if (Available(point)) {
        measured = done.end;
        predicted = MapEnd(done.track, done.end);
      } else if (!force_[k]) {
        Wait(k, point);
        return false;
      } else {
        ++broken_;
      }
    }
  } else {
    if (!add_groups(x)) return false;
    model = ModelTime(x);
  }
  const double factor = op_factor_[span.op];
  const int64_t tail = std::max<int64_t>(0, p.t1 - std::max(p.t0, measured));
  int64_t own = Scaled(tail, factor);
  int64_t comm = own;
  if (model) {
    comm = *model;
    own = span.role == SpanRole::kWait ? std::min(own, *model) : *model;
  }
  *end = p0_[g] + own;
  if (!changes_.no_wait && factor != 0 &&
      predicted != std::numeric_limits<int64_t>::min()) {
    *end = std::max(*end, predicted + comm);
  }
  return true;
}

void Simulator::Advance(int32_t k) {
  const absl::Span<const Piece> pieces = graph_.pieces(k);
  const int64_t done = 2 * static_cast<int64_t>(pieces.size());
  while (state_[k] < done) {
    const int64_t q = state_[k] / 2;
    const Piece& p = pieces[q];
    const int64_t g = Global(k, q);
    const int32_t x = p.span;
    if (state_[k] % 2 == 0) {
      if (x >= 0 && all_[x].has_step) step_[k] = all_[x].step;
      int64_t start = q == 0 ? p.t0 : p1_[g - 1];
      const int32_t launch = x >= 0 ? graph_.launch(x) : -1;
      if (Gpu(k) && launch >= 0 && p.t0 == all_[x].start && !changes_.no_wait &&
          op_factor_[all_[x].op] != 0) {
        const JobSpan& call = all_[launch];
        const Point point = StartPoint(call.track, call.start);
        if (Available(point)) {
          const bool idle =
              q == 0 || pieces[q - 1].span < 0 || pieces[q - 1].t1 < p.t0;
          const int64_t lag =
              idle ? std::max<int64_t>(0, p.t0 - call.start) : 0;
          start = std::max(start, TimeAt(point, call.start) + lag);
        } else if (!force_[k]) {
          Wait(k, point);
          return;
        } else {
          ++broken_;
        }
      }
      // A thread that follows another resumes, after untraced time, where
      // its lead's replay puts the measured resumption.
      if (lead_[k] >= 0 && x >= 0 && (q == 0 || pieces[q - 1].span < 0)) {
        const int32_t lead = lead_[k];
        const Point point = StartPoint(lead, p.t0);
        if (Available(point)) {
          const int64_t led = TimeAt(point, p.t0);
          start = q == 0 ? led : std::max(start, led);
        } else if (!force_[k]) {
          Wait(k, point);
          return;
        } else {
          ++broken_;
        }
      }
      p0_[g] = start;
      own_[g] = OwnTime(k, q);
    } else {
      int64_t end = p0_[g] + own_[g];
      if (x >= 0 && p.t1 == all_[x].end) {
        const bool depends = ends_first_[x] < ends_first_[x + 1] ||
                             all_[x].role == SpanRole::kWait ||
                             all_[x].role == SpanRole::kSync;
        if (depends) {
          if (!EndWithArrivals(k, q, x, &end)) return;
        } else if (const std::optional<int64_t> model = ModelTime(x)) {
          end = p0_[g] + *model;  // a blocking send, a rooted root...
        }
      }
      p1_[g] = std::max(end, p0_[g]);
    }
    force_[k] = 0;
    ++state_[k];
    Wake(k);
  }
}

ReplayTimes Simulator::Run() {
  const size_t pieces = static_cast<size_t>(piece_base_.back());
  p0_.assign(pieces, 0);
  p1_.assign(pieces, 0);
  own_.assign(pieces, 0);
  state_.assign(tracks_.size(), 0);
  step_.assign(tracks_.size(), kNoStep);
  force_.assign(tracks_.size(), 0);
  queued_.assign(tracks_.size(), 1);
  waiters_.resize(tracks_.size());
  for (size_t k = tracks_.size(); k-- > 0;) {
    run_.push_back(static_cast<int32_t>(k));
  }
  while (true) {
    while (!run_.empty()) {
      const int32_t k = run_.back();
      run_.pop_back();
      queued_[k] = 0;
      Advance(k);
    }
    // Stuck (causality violated) or done: force the unfinished track whose
    // pending piece was measured earliest.
    int32_t pick = -1;
    int64_t earliest = std::numeric_limits<int64_t>::max();
    for (size_t k = 0; k < tracks_.size(); ++k) {
      const absl::Span<const Piece> list =
          graph_.pieces(static_cast<int32_t>(k));
      if (state_[k] >= 2 * static_cast<int64_t>(list.size())) continue;
      const Piece& p = list[state_[k] / 2];
      const int64_t t = state_[k] % 2 == 0 ? p.t0 : p.t1;
      if (t < earliest) {
        earliest = t;
        pick = static_cast<int32_t>(k);
      }
    }
    if (pick < 0) break;
    force_[pick] = 1;
    queued_[pick] = 1;
    run_.push_back(pick);
  }
  ReplayTimes times;
  times.start.resize(all_.size());
  times.end.resize(all_.size());
  for (size_t k = 0; k < tracks_.size(); ++k) {
    const JobTrack& track = tracks_[k];
    const absl::Span<const Piece> list = graph_.pieces(static_cast<int32_t>(k));
    // Spans come by start: the piece of each start is at or after the last.
    size_t q = 0;
    for (int64_t i = track.first; i < track.first + track.count; ++i) {
      const JobSpan& s = all_[i];
      while (q + 1 < list.size() && list[q + 1].t0 <= s.start) ++q;
      times.start[i] = MapStartIn(static_cast<int32_t>(k), q, s.start);
      times.end[i] = s.end > s.start
                         ? std::max(times.start[i], MapEnd(s.track, s.end, q))
                         : times.start[i];
    }
  }
  times.broken_dependencies = broken_;
  times.scaled_ops = op_scaled_;
  return times;
}

}  // namespace

absl::Status CheckChanges(const ReplayChanges& changes) {
  for (const ReplayChanges::Scale& scale : changes.scales) {
    if (scale.pattern.empty()) {
      return absl::InvalidArgumentError(
          "--scale needs NAME_GLOB=F or CATEGORY=F (an empty name matches "
          "nothing)");
    }
    if (!std::isfinite(scale.factor) || scale.factor < 0 ||
        scale.factor > kMaxFactor) {
      return absl::InvalidArgumentError(
          absl::StrCat("--scale ", scale.pattern, "=", scale.factor,
                       ": the factor must be a number from 0 to ", kMaxFactor));
    }
  }
  absl::flat_hash_set<int32_t> seen;
  for (const auto& [r, s] : changes.rank_like) {
    if (r < 0 || s < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--rank-like ", r, "=", s, ": ranks are >= 0"));
    }
    if (!seen.insert(r).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--rank-like: rank ", r, " is given twice; give each rank once"));
    }
  }
  if (changes.comm_model) {
    const CommModel& m = *changes.comm_model;
    if (!std::isfinite(m.bytes_per_s) || m.bytes_per_s < 1) {
      return absl::InvalidArgumentError(
          "--comm-model needs --bandwidth, at least 1 byte per second (e.g. "
          "12.5GB/s)");
    }
    if (m.latency_ns < 0 || m.latency_ns > kMaxLatencyNs) {
      return absl::InvalidArgumentError(
          "--latency must be from 0 to 1s (e.g. 5us)");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ReplayTimes> Replay(const DependencyGraph& graph,
                                   const ReplayChanges& changes) {
  Simulator simulator(graph, changes);
  if (absl::Status s = simulator.Prepare(); !s.ok()) return s;
  return simulator.Run();
}

}  // namespace meridian
