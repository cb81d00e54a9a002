#include "query/clocks/evidence_log.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "store/chunk_merge.h"

namespace meridian {

EvidenceLog::EvidenceLog(int64_t max_bytes) : max_bytes_(max_bytes) {}

int64_t EvidenceLog::BytesOf(const LoggedChunk& chunk) {
  int64_t bytes =
      sizeof(LoggedChunk) +
      static_cast<int64_t>(chunk.spans.capacity() * sizeof(EvidenceSpan));
  for (const EvidenceSpan& span : chunk.spans) {
    bytes += static_cast<int64_t>(span.sources.capacity() * sizeof(int32_t));
  }
  return bytes;
}

const std::optional<SpanRole>* EvidenceLog::RoleOf(int64_t op_id) {
  if (op_id != last_op_ || last_role_ == nullptr) {
    auto found = roles_.find(op_id);
    if (found == roles_.end()) return nullptr;
    last_op_ = op_id;
    last_role_ = &found->second;
  }
  return last_role_;
}

void EvidenceLog::Strings(const v1::Batch& batch,
                          const std::vector<int64_t>& string_id) {
  batch_ = &batch;
  string_id_ = &string_id;
  batch_index_.clear();
}

const std::string* EvidenceLog::TextOf(int64_t id) {
  if (batch_ == nullptr || string_id_ == nullptr) return nullptr;
  if (batch_index_.empty()) {
    for (size_t i = 0; i < string_id_->size(); ++i) {
      batch_index_.try_emplace((*string_id_)[i], static_cast<int>(i));
    }
  }
  auto found = batch_index_.find(id);
  return found == batch_index_.end() ? nullptr
                                     : &batch_->strings(found->second);
}

void EvidenceLog::Operation(int64_t op_id, v1::Category category,
                            absl::string_view name) {
  if (roles_.contains(op_id)) return;
  roles_.emplace(op_id, EvidenceRole(category, std::string(name)));
  last_role_ = nullptr;  // the map may have moved its entries
}

void EvidenceLog::Chunk(int64_t job_id, int64_t track_id, int64_t chunk_id,
                        const SpanColumns& s) {
  if (s.size() == 0) return;
  LoggedChunk chunk;
  chunk.job_id = job_id;
  chunk.id = chunk_id;
  chunk.track = track_id;
  chunk.first_start = s.start_ns[0];  // ascending (write_observer.h)
  // How many are evidence, so that they are stored in one allocation.
  size_t evidence = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const std::optional<SpanRole>* role = RoleOf(s.name[i]);
    if (role == nullptr) {
      chunk.unreadable = true;  // an operation it was not told of
      pending_.push_back(std::move(chunk));
      return;
    }
    evidence += role->has_value();
  }
  chunk.spans.reserve(evidence);
  StoredSpan& span = scratch_;
  span.track_id = track_id;
  for (size_t i = 0; i < s.size(); ++i) {
    const std::optional<SpanRole>& role = *RoleOf(s.name[i]);
    if (!role) continue;
    SpanFromColumns(s, i, &span);
    span.op_id = s.name[i];
    span.args.clear();
    if (EvidenceReadsArgs(*role)) {
      absl::Status read = ArgsOf(
          s, i,
          [this](int64_t id, std::string* to) {
            const std::string* text = TextOf(id);
            if (text == nullptr) {
              return absl::DataLossError("an arg names a string not told");
            }
            to->assign(*text);
            return absl::OkStatus();
          },
          &span.args);
      if (!read.ok()) {
        chunk.unreadable = true;
        break;
      }
    }
    chunk.spans.push_back(EvidenceOf(*role, span));
  }
  chunk.bytes = BytesOf(chunk);
  pending_.push_back(std::move(chunk));
}

void EvidenceLog::Committed() {
  batch_ = nullptr;
  string_id_ = nullptr;
  batch_index_.clear();
  absl::MutexLock lock(&mu_);
  for (LoggedChunk& chunk : pending_) {
    // Not held: a Take of a range holding it then misses it and reads.
    if (chunk.unreadable) continue;
    JobLog& log = jobs_[chunk.job_id];
    const int64_t bytes = chunk.bytes;
    log.bytes += bytes;
    bytes_ += bytes;
    log.used = ++sequence_;
    log.chunks.push_back(std::move(chunk));
  }
  pending_.clear();
  while (bytes_ > max_bytes_ && !jobs_.empty()) {
    auto oldest = jobs_.begin();
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      if (it->second.used < oldest->second.used) oldest = it;
    }
    ++counters_.forgotten;
    ForgetLocked(oldest->first);
  }
}

void EvidenceLog::RolledBack() {
  batch_ = nullptr;
  string_id_ = nullptr;
  batch_index_.clear();
  pending_.clear();
  // The write's operation ids may name other operations later.
  roles_.clear();
  last_role_ = nullptr;
}

void EvidenceLog::Deleted(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  ForgetLocked(job_id);
}

void EvidenceLog::ForgetLocked(int64_t job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  bytes_ -= it->second.bytes;
  jobs_.erase(it);
}

std::optional<ClockEvidence> EvidenceLog::Take(int64_t job_id, int64_t after,
                                               int64_t upto, int64_t chunks) {
  std::vector<LoggedChunk> taken;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
      ++counters_.missed;
      return std::nullopt;
    }
    JobLog& log = it->second;
    size_t kept = 0;
    for (LoggedChunk& chunk : log.chunks) {
      if (chunk.id > upto) {
        log.chunks[kept++] = std::move(chunk);
        continue;
      }
      const int64_t bytes = chunk.bytes;
      log.bytes -= bytes;
      bytes_ -= bytes;
      if (chunk.id > after) taken.push_back(std::move(chunk));
    }
    log.chunks.resize(kept);
    if (log.chunks.empty()) jobs_.erase(it);
    if (static_cast<int64_t>(taken.size()) != chunks) {
      ++counters_.missed;
      return std::nullopt;
    }
    ++counters_.taken;
  }
  return Merge(std::move(taken));
}

ClockEvidence EvidenceLog::Merge(std::vector<LoggedChunk> chunks) {
  ClockEvidence out;
  size_t total = 0;
  for (const LoggedChunk& chunk : chunks) {
    out.SawStart(chunk.track, chunk.first_start);
    total += chunk.spans.size();
  }
  out.spans.reserve(total);
  // Chunks by (first evidence start, id), opened as the merge reaches them;
  // the open ones in a min-heap on (next start, track, chunk id): Store::
  // Scan's order (chunk_merge.h).
  std::vector<LoggedChunk*> order;
  for (LoggedChunk& chunk : chunks) {
    if (!chunk.spans.empty()) order.push_back(&chunk);
  }
  std::sort(order.begin(), order.end(),
            [](const LoggedChunk* a, const LoggedChunk* b) {
              return std::make_pair(a->spans[0].start_ns, a->id) <
                     std::make_pair(b->spans[0].start_ns, b->id);
            });
  struct Cursor {
    LoggedChunk* chunk;
    size_t next;
  };
  const auto later = [](const Cursor& a, const Cursor& b) {
    const EvidenceSpan& x = a.chunk->spans[a.next];
    const EvidenceSpan& y = b.chunk->spans[b.next];
    return std::tie(x.start_ns, a.chunk->track, a.chunk->id) >
           std::tie(y.start_ns, b.chunk->track, b.chunk->id);
  };
  std::vector<Cursor> heap;
  size_t opened = 0;
  while (true) {
    while (opened < order.size() &&
           (heap.empty() ||
            order[opened]->spans[0].start_ns <=
                heap.front().chunk->spans[heap.front().next].start_ns)) {
      heap.push_back(Cursor{order[opened++], 0});
      std::push_heap(heap.begin(), heap.end(), later);
    }
    if (heap.empty()) break;
    Cursor& top = heap.front();
    out.spans.push_back(std::move(top.chunk->spans[top.next++]));
    if (top.next == top.chunk->spans.size()) {
      top = heap.back();
      heap.pop_back();
      if (heap.empty()) continue;
    }
    SiftDown(heap, later);
  }
  return out;
}

EvidenceLog::Counters EvidenceLog::counters() const {
  absl::MutexLock lock(&mu_);
  Counters c = counters_;
  c.bytes = bytes_;
  c.jobs = static_cast<int64_t>(jobs_.size());
  return c;
}

}  // namespace meridian
