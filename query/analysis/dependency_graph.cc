#include "query/analysis/dependency_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace meridian {
namespace {

template <typename T>
int64_t Bytes(const std::vector<T>& v) {
  return static_cast<int64_t>(v.capacity() * sizeof(T));
}

}  // namespace

DependencyGraph::DependencyGraph(const JobSpans& spans)
    : spans_(&spans),
      end_binding_(spans.spans().size(), -1),
      launch_(spans.spans().size(), -1),
      mpi_(static_cast<int32_t>(spans.spans().size()),
           [&spans](int32_t i) { return spans.MpiOpOf(spans.spans()[i]); }) {
  BuildPieces();
  BindMpiEnds();
  BuildLaunches();
  BuildCompletions();
}

void DependencyGraph::BuildPieces() {
  const std::vector<JobSpan>& all = spans_->spans();
  struct Open {
    int32_t span;
    int64_t end;
  };
  std::vector<Open> stack;
  piece_first_.reserve(spans_->tracks().size() + 1);
  pieces_.reserve(all.size() * 2);
  for (const JobTrack& track : spans_->tracks()) {
    piece_first_.push_back(static_cast<int64_t>(pieces_.size()));
    stack.clear();
    bool started = false;
    int64_t cursor = 0;
    auto emit = [&](int64_t t0, int64_t t1, int32_t span) {
      if (t0 < t1) pieces_.push_back({t0, t1, span});
    };
    for (int64_t i = track.first; i < track.first + track.count; ++i) {
      const JobSpan& s = all[i];
      if (s.async || s.end <= s.start) continue;
      // Spans that ended before s starts give their remaining time.
      while (!stack.empty() && stack.back().end <= s.start) {
        emit(cursor, stack.back().end, stack.back().span);
        cursor = std::max(cursor, stack.back().end);
        stack.pop_back();
      }
      // Open spans that end before s does do not contain it: s, starting
      // later, takes their remaining time (overlap on one track is rare).
      while (!stack.empty() && stack.back().end < s.end) {
        emit(cursor, s.start, stack.back().span);
        cursor = std::max(cursor, s.start);
        stack.pop_back();
      }
      if (stack.empty()) {
        if (started) emit(cursor, s.start, -1);
      } else {
        emit(cursor, s.start, stack.back().span);
      }
      started = true;
      cursor = s.start;
      stack.push_back({static_cast<int32_t>(i), s.end});
    }
    while (!stack.empty()) {
      emit(cursor, stack.back().end, stack.back().span);
      cursor = std::max(cursor, stack.back().end);
      stack.pop_back();
    }
  }
  piece_first_.push_back(static_cast<int64_t>(pieces_.size()));
}

const DependencyGraph::Piece* DependencyGraph::PieceBefore(int32_t track,
                                                           int64_t t) const {
  absl::Span<const Piece> list = pieces(track);
  auto it = std::lower_bound(
      list.begin(), list.end(), t,
      [](const Piece& piece, int64_t time) { return piece.t0 < time; });
  if (it == list.begin()) return nullptr;
  return &*(it - 1);
}

void DependencyGraph::BindMpiEnds() {
  const std::vector<JobSpan>& all = spans_->spans();
  mpi_.ForEachGroup([&](const MpiMatching::Group& group) {
    for (int32_t e : group.ends) {
      if (all[group.last].start > all[e].start) end_binding_[e] = group.last;
    }
  });
}

void DependencyGraph::BuildLaunches() {
  const std::vector<JobSpan>& all = spans_->spans();
  const std::vector<JobTrack>& tracks = spans_->tracks();
  absl::flat_hash_map<std::pair<int32_t, uint64_t>, int32_t> cpu_call;
  for (size_t i = 0; i < all.size(); ++i) {
    const JobSpan& s = all[i];
    if (s.correlation != 0 && tracks[s.track].kind == v1::TRACK_KIND_THREAD) {
      cpu_call.emplace(std::make_pair(tracks[s.track].process, s.correlation),
                       static_cast<int32_t>(i));
    }
  }
  if (cpu_call.empty()) return;
  for (size_t i = 0; i < all.size(); ++i) {
    const JobSpan& s = all[i];
    if (s.correlation == 0 ||
        tracks[s.track].kind != v1::TRACK_KIND_GPU_STREAM) {
      continue;
    }
    auto it =
        cpu_call.find(std::make_pair(tracks[s.track].process, s.correlation));
    if (it != cpu_call.end()) launch_[i] = it->second;
  }
}

void DependencyGraph::BuildCompletions() {
  const std::vector<JobSpan>& all = spans_->spans();
  const std::vector<JobTrack>& tracks = spans_->tracks();
  async_by_end_.resize(tracks.size());
  gpu_by_end_.resize(spans_->catalog().processes.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const JobTrack& track = tracks[all[i].track];
    if (all[i].async) {
      async_by_end_[all[i].track].push_back(static_cast<int32_t>(i));
    } else if (track.kind == v1::TRACK_KIND_GPU_STREAM && track.process >= 0) {
      gpu_by_end_[track.process].push_back(static_cast<int32_t>(i));
    }
  }
  auto by_end = [&all](int32_t a, int32_t b) {
    return std::make_pair(all[a].end, a) < std::make_pair(all[b].end, b);
  };
  for (auto& list : async_by_end_) std::sort(list.begin(), list.end(), by_end);
  for (auto& list : gpu_by_end_) std::sort(list.begin(), list.end(), by_end);
  // A Wait binds to the latest start its completed requests waited for.
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].role != SpanRole::kWait) continue;
    int32_t binding = -1;
    for (int32_t a : Completes(static_cast<int64_t>(i))) {
      const int32_t b = end_binding_[a];
      if (b >= 0 && (binding < 0 || all[b].start > all[binding].start)) {
        binding = b;
      }
    }
    if (binding >= 0 && all[binding].start > all[i].start) {
      end_binding_[i] = binding;
    }
  }
}

std::vector<int32_t> DependencyGraph::Completes(int64_t span) const {
  const std::vector<JobSpan>& all = spans_->spans();
  const JobSpan& s = all[span];
  std::vector<int32_t> out;
  if (s.role == SpanRole::kWait) {
    const std::vector<int32_t>& list = async_by_end_[s.track];
    auto it = std::lower_bound(
        list.begin(), list.end(), s.start,
        [&all](int32_t a, int64_t t) { return all[a].end < t; });
    for (; it != list.end() && all[*it].end <= s.end; ++it) out.push_back(*it);
  } else if (s.role == SpanRole::kSync) {
    const int32_t process = spans_->tracks()[s.track].process;
    if (process < 0) return out;
    const std::vector<int32_t>& list = gpu_by_end_[process];
    auto it = std::upper_bound(
        list.begin(), list.end(), s.end,
        [&all](int64_t t, int32_t a) { return t < all[a].end; });
    if (it != list.begin() && all[*(it - 1)].end > s.start) {
      out.push_back(*(it - 1));
    }
  }
  return out;
}

int64_t DependencyGraph::MemoryBytes() const {
  int64_t bytes = Bytes(pieces_) + Bytes(piece_first_) + Bytes(end_binding_) +
                  Bytes(launch_) + mpi_.MemoryBytes();
  for (const auto& list : async_by_end_) bytes += Bytes(list);
  for (const auto& list : gpu_by_end_) bytes += Bytes(list);
  return bytes;
}

}  // namespace meridian
