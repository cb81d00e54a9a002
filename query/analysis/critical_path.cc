#include "query/analysis/critical_path.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "query/ops/category.h"

namespace meridian {
namespace {

v1::TimeClass ClassOf(const JobSpans& spans, const JobSpan& span) {
  if (span.role == SpanRole::kSync) return v1::TIME_CLASS_WAITING;
  if (spans.setup(span)) return v1::TIME_CLASS_SETUP;
  return IsCommunication(span.category) ? v1::TIME_CLASS_COMMUNICATION
                                        : v1::TIME_CLASS_COMPUTE;
}

}  // namespace

// Builds the path backwards: Add() is called with ever earlier segments,
// over one block's spans after another (Bind).
struct PathWalk::Builder {
  const JobSpans* spans = nullptr;
  std::vector<v1::PathSegment> backwards;
  // What the last segment was a piece of: its track's store id and the
  // span (start, end, operation), or untraced time (no span). By value, so
  // that the same span seen in two blocks' loads is one span.
  struct Of {
    int64_t track = -1;
    bool traced = false;
    int64_t start = 0, end = 0, op = 0;
    bool operator==(const Of& o) const {
      return track == o.track && traced == o.traced && start == o.start &&
             end == o.end && op == o.op;
    }
  } last;

  // [t0, t1) on `track` in `span` (untraced: null). A piece that continues
  // the same span (or untraced time) on the same track joins the segment.
  void Add(int32_t track, int64_t t0, int64_t t1, v1::TimeClass time_class,
           const JobSpan* span, int32_t peer = -1, std::string name = "") {
    if (t0 >= t1) return;
    const JobTrack& t = spans->tracks()[track];
    Of of{t.id, span != nullptr};
    if (span != nullptr)
      of.start = span->start, of.end = span->end, of.op = span->op;
    if (!backwards.empty() && last == of && backwards.back().start_ns() == t1 &&
        backwards.back().time_class() == time_class) {
      v1::PathSegment& later = backwards.back();
      later.set_start_ns(t0);
      later.set_dur_ns(later.dur_ns() + (t1 - t0));
      return;
    }
    v1::PathSegment segment;
    segment.set_rank(t.rank);
    segment.set_time_class(time_class);
    segment.set_category(span ? span->category : v1::CATEGORY_UNSPECIFIED);
    segment.set_name(span && name.empty() ? spans->name(*span) : name);
    segment.set_start_ns(t0);
    segment.set_dur_ns(t1 - t0);
    segment.set_track(t.name);
    if (peer >= 0) segment.set_peer(peer);
    backwards.push_back(std::move(segment));
    last = of;
  }
};

namespace {

// The sender a receive, a Sendrecv (or a Wait completing receives) heard
// from, or -1.
int32_t PeerOf(const DependencyGraph& graph, int64_t index, int32_t binding) {
  const std::vector<JobSpan>& all = graph.spans().spans();
  const JobSpan& span = all[index];
  if (binding >= 0) {
    const SpanRole role = all[binding].role;
    return role == SpanRole::kSend || role == SpanRole::kSendRecv
               ? all[binding].rank
               : -1;
  }
  if (span.role == SpanRole::kRecv) return span.peer;
  if (span.role == SpanRole::kSendRecv) return span.recv.peer;
  if (span.role == SpanRole::kWait) {
    int32_t peer = -1;
    for (int32_t a : graph.Completes(index)) {
      if (all[a].role == SpanRole::kRecv) peer = all[a].peer;
    }
    return peer;
  }
  return -1;
}

// Where the walk starts: the track of the latest-ending span that ends
// inside the window (lowest rank, then track, on ties).
int32_t LastTrack(const JobSpans& spans, const TimeWindow& window) {
  int32_t best = -1;
  int64_t best_end = 0;
  for (const JobSpan& s : spans.spans()) {
    if (s.async || s.end > window.end || s.end <= window.start) continue;
    const int32_t rank = spans.tracks()[s.track].rank;
    if (best < 0 || s.end > best_end ||
        (s.end == best_end &&
         std::make_pair(rank, s.track) <
             std::make_pair(spans.tracks()[best].rank, best))) {
      best = s.track;
      best_end = s.end;
    }
  }
  return best;
}

// The walk back from the window's end over the graph (docs/analysis.md):
// on the current track, the piece before t is on the path; at a span's last
// piece the walk jumps to the start its end waited for (or the GPU work a
// synchronisation waited for), and at a GPU span's start after an idle
// stream, to the call that launched it.
// Pieces are cut at `floor` (<= the window's start): the window's start
// for a whole path, else where the block's spans stop being all there
// (PathWalk::Back). The walk stops at the first point at or before the
// window's start, and never goes below `floor` (a move or a jump to an
// earlier time stops at `floor` on the current track instead): the
// earlier block goes on from there, and finds the same piece, jump or
// launch again with what it holds.
class Walker {
 public:
  Walker(const DependencyGraph& graph, const TimeWindow& window, int32_t track,
         int64_t t, int64_t floor, PathWalk::Builder& path)
      : graph_(graph),
        all_(graph.spans().spans()),
        path_(path),
        ws_(window.start),
        floor_(std::min(floor, window.start)),
        t_(t),
        track_(track) {}

  // Walks back; returns where it stopped (track index, time).
  std::pair<int32_t, int64_t> Run() && {
    // Each step consumes a piece or jumps to an earlier start; the bound
    // only guards against a graph this walk does not expect.
    int64_t turns = 4 * static_cast<int64_t>(all_.size()) + 16;
    while (t_ > ws_ && turns-- > 0 && Step()) {
    }
    return {track_, t_};
  }

 private:
  using Piece = DependencyGraph::Piece;

  // One step back from t_; false when the walk has reached its start.
  bool Step() {
    const Piece* p = graph_.PieceBefore(track_, t_);
    if (p == nullptr) {
      path_.Add(track_, floor_, t_, v1::TIME_CLASS_UNTRACED, nullptr);
      t_ = floor_;
      return false;
    }
    if (p->t1 < t_) {
      path_.Add(track_, std::max(p->t1, floor_), t_, v1::TIME_CLASS_UNTRACED,
                nullptr);
      t_ = std::max(p->t1, floor_);
      return true;
    }
    if (p->span < 0) {
      path_.Add(track_, std::max(p->t0, floor_), t_, v1::TIME_CLASS_UNTRACED,
                nullptr);
      t_ = std::max(p->t0, floor_);
      return true;
    }
    const JobSpan& x = all_[p->span];
    if (p->t1 == x.end && FollowEnd(*p, x)) return true;
    path_.Add(track_, std::max(p->t0, floor_), t_, ClassOf(graph_.spans(), x),
              &x, PeerOf(graph_, p->span, -1));
    t_ = std::max(p->t0, floor_);
    FollowLaunch(p->span, x);
    return true;
  }

  // Whether a jump from this track's piece to `to` may be taken: not below
  // the floor, where the piece (its span's children, unread) may not be
  // the one a whole load has; the walk then stops at the floor on this
  // track, and the earlier block takes the jump or not.
  bool JumpsTo(int64_t to) const { return to >= floor_; }

  // At span x's last piece p: if what its end waited for started (or
  // finished, for a synchronisation) inside p, the path goes there.
  bool FollowEnd(const Piece& p, const JobSpan& x) {
    const int32_t b = graph_.end_binding(p.span);
    if (b >= 0 && all_[b].start < t_ && all_[b].start >= p.t0) {
      const int64_t arrival = all_[b].start;
      path_.Add(track_, std::max(arrival, floor_), t_,
                ClassOf(graph_.spans(), x), &x, PeerOf(graph_, p.span, b));
      if (!JumpsTo(arrival)) {
        t_ = floor_;
        return true;
      }
      track_ = all_[b].track;
      t_ = arrival;
      return true;
    }
    if (x.role != SpanRole::kSync) return false;
    const std::vector<int32_t> gpu = graph_.Completes(p.span);
    if (gpu.empty() || all_[gpu[0]].end >= t_ || all_[gpu[0]].end < p.t0) {
      return false;
    }
    const int64_t done = all_[gpu[0]].end;
    path_.Add(track_, std::max(done, floor_), t_, v1::TIME_CLASS_WAITING, &x);
    if (!JumpsTo(done)) {
      t_ = floor_;
      return true;
    }
    track_ = all_[gpu[0]].track;
    t_ = done;
    return true;
  }

  // At a GPU span's start after an idle stream, its launch explains the
  // idle time.
  void FollowLaunch(int32_t span, const JobSpan& x) {
    const int32_t launch = graph_.launch(span);
    if (t_ != x.start || launch < 0 || t_ <= floor_) return;
    const Piece* before = graph_.PieceBefore(track_, t_);
    const JobSpan& call = all_[launch];
    if ((before != nullptr && before->span >= 0 && before->t1 >= t_) ||
        call.start >= t_) {
      return;
    }
    const int64_t from = std::min(call.end, t_);
    // The wait is the GPU track's, whatever the block holds below the
    // floor; the CPU track is taken up from `from`, by an earlier block if
    // that is below the floor.
    path_.Add(track_, from, t_, v1::TIME_CLASS_WAITING, nullptr, -1,
              absl::StrCat("launch of ", graph_.spans().name(x)));
    track_ = call.track;
    t_ = from;
  }

  const DependencyGraph& graph_;
  const std::vector<JobSpan>& all_;
  PathWalk::Builder& path_;
  const int64_t ws_;
  const int64_t floor_;  // pieces are cut here
  int64_t t_;
  int32_t track_;
};

// The reply's totals per time class and per rank, from the path.
void Summarize(std::vector<v1::PathSegment> segments,
               v1::CriticalPathReply* reply) {
  std::map<int32_t, int64_t> by_rank;
  for (v1::PathSegment& segment : segments) {
    switch (segment.time_class()) {
      case v1::TIME_CLASS_COMPUTE:
        reply->set_compute_ns(reply->compute_ns() + segment.dur_ns());
        break;
      case v1::TIME_CLASS_COMMUNICATION:
        reply->set_communication_ns(reply->communication_ns() +
                                    segment.dur_ns());
        break;
      case v1::TIME_CLASS_WAITING:
        reply->set_waiting_ns(reply->waiting_ns() + segment.dur_ns());
        break;
      case v1::TIME_CLASS_SETUP:
        reply->set_setup_ns(reply->setup_ns() + segment.dur_ns());
        break;
      default:
        reply->set_untraced_ns(reply->untraced_ns() + segment.dur_ns());
        break;
    }
    by_rank[segment.rank()] += segment.dur_ns();
    *reply->add_segments() = std::move(segment);
  }
  reply->set_explained(
      static_cast<double>(reply->dur_ns() - reply->untraced_ns()) /
      static_cast<double>(reply->dur_ns()));
  std::vector<std::pair<int32_t, int64_t>> ranks(by_rank.begin(),
                                                 by_rank.end());
  std::stable_sort(
      ranks.begin(), ranks.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [rank, dur] : ranks) {
    v1::RankTime* r = reply->add_ranks();
    r->set_rank(rank);
    r->set_dur_ns(dur);
  }
}

}  // namespace

TimeWindow JobWindow(const JobSpans& spans) {
  TimeWindow window;
  bool any = false;
  for (const JobSpan& s : spans.spans()) {
    window.start = any ? std::min(window.start, s.start) : s.start;
    window.end = any ? std::max(window.end, s.end) : s.end;
    any = true;
  }
  return window;
}

std::optional<TimeWindow> StepWindow(const JobSpans& spans, int64_t step) {
  std::optional<TimeWindow> window;
  for (const JobSpan& s : spans.spans()) {
    if (!s.has_step || s.step != step) continue;
    if (!window) {
      window = TimeWindow{s.start, s.end};
    } else {
      window->start = std::min(window->start, s.start);
      window->end = std::max(window->end, s.end);
    }
  }
  return window;
}

PathWalk::PathWalk() : builder_(std::make_unique<Builder>()) {}
PathWalk::~PathWalk() = default;

void PathWalk::Back(const DependencyGraph& graph, const TimeWindow& window,
                    bool last, int64_t complete_from) {
  const JobSpans& spans = graph.spans();
  builder_->spans = &spans;
  int32_t track = -1;
  int64_t t = window.end;
  if (!at_) {
    track = LastTrack(spans, window);
    if (track < 0 || window.end <= window.start) {
      done_ = true;
      return;
    }
  } else {
    t = at_->t;
    for (size_t i = 0; i < spans.tracks().size(); ++i) {
      if (spans.tracks()[i].id == at_->track_id)
        track = static_cast<int32_t>(i);
    }
    // Every block's JobSpans has every track of the catalog (its spans or
    // none), so the track is there.
    if (track < 0) {
      done_ = true;
      return;
    }
  }
  const auto [at_track, at_t] =
      Walker(graph, window, track, t, last ? window.start : complete_from,
             *builder_)
          .Run();
  at_ = At{spans.tracks()[at_track].id, at_t};
  if (last) done_ = true;
}

v1::CriticalPathReply PathWalk::Finish(const TimeWindow& window) && {
  v1::CriticalPathReply reply;
  reply.set_start_ns(window.start);
  reply.set_dur_ns(window.end - window.start);
  if (builder_->backwards.empty()) return reply;
  std::reverse(builder_->backwards.begin(), builder_->backwards.end());
  Summarize(std::move(builder_->backwards), &reply);
  return reply;
}

v1::CriticalPathReply CriticalPath(const DependencyGraph& graph,
                                   const TimeWindow& window) {
  PathWalk walk;
  walk.Back(graph, window, /*last=*/true);
  return std::move(walk).Finish(window);
}

}  // namespace meridian
