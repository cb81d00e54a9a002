#include "query/analysis_memory.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/memory.h"

namespace meridian {
namespace {

// Marks Reserve's refusals (IsBusy).
constexpr char kBusyPayload[] = "meridian.dev/analysis-memory-busy";

}  // namespace

bool AnalysisMemory::IsBusy(const absl::Status& status) {
  return absl::IsResourceExhausted(status) &&
         status.GetPayload(kBusyPayload).has_value();
}

AnalysisMemory::Lease::Lease(Lease&& other) noexcept
    : memory_(other.memory_), bytes_(other.bytes_) {
  other.memory_ = nullptr;
  other.bytes_ = 0;
}

AnalysisMemory::Lease& AnalysisMemory::Lease::operator=(
    Lease&& other) noexcept {
  if (this != &other) {
    if (memory_ != nullptr) memory_->Release(bytes_);
    memory_ = other.memory_;
    bytes_ = other.bytes_;
    other.memory_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

AnalysisMemory::Lease::~Lease() {
  if (memory_ != nullptr) memory_->Release(bytes_);
}

absl::StatusOr<AnalysisMemory::Lease> AnalysisMemory::Reserve(
    uint64_t bytes, const std::string& what) {
  bytes = std::min(bytes, budget_);
  {
    absl::MutexLock lock(&mu_);
    if (queue_.empty() && held_ + bytes <= budget_) {
      held_ += bytes;
      peak_ = std::max(peak_, held_);
      return Lease(this, bytes);
    }
  }
  if (reclaim_) reclaim_();
  absl::MutexLock lock(&mu_);
  ++waited_;
  const uint64_t ticket = next_ticket_++;
  queue_.push_back(ticket);
  // Its turn (the oldest waiting) and room beside what is held.
  const auto granted = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return queue_.front() == ticket && held_ + bytes <= budget_;
  };
  // What is kept can be kept again after a reclaim (the next whole-job
  // analysis, once its query ends): the oldest waiting reclaims again each
  // kReclaimEvery until it is granted.
  const absl::Time deadline = absl::Now() + wait_;
  bool ok = false;
  while (!(ok = mu_.AwaitWithDeadline(
               absl::Condition(&granted),
               std::min(deadline, absl::Now() + kReclaimEvery))) &&
         absl::Now() < deadline) {
    if (reclaim_ && queue_.front() == ticket) {
      mu_.Unlock();
      reclaim_();
      mu_.Lock();
    }
  }
  if (!ok) {
    ++refused_;
    const int64_t ahead =
        std::find(queue_.begin(), queue_.end(), ticket) - queue_.begin();
    absl::Status busy = absl::ResourceExhaustedError(absl::StrCat(
        what, " needs about ", (bytes + (1 << 20) - 1) >> 20, " MiB",
        bytes == budget_ ? ", all" : "",
        " of this collector's --analysis-memory-mib ", budget_ >> 20,
        "; the queries running and what is kept hold ", held_ >> 20,
        " MiB of it",
        ahead > 0 ? absl::StrCat(", and ", ahead, " waited ahead of it") : "",
        " (waited ", absl::FormatDuration(wait_),
        "); retry in a few seconds, or raise the limit"));
    busy.SetPayload(kBusyPayload, absl::Cord("1"));
    queue_.erase(std::find(queue_.begin(), queue_.end(), ticket));
    return busy;
  }
  queue_.erase(std::find(queue_.begin(), queue_.end(), ticket));
  held_ += bytes;
  peak_ = std::max(peak_, held_);
  return Lease(this, bytes);
}

std::optional<AnalysisMemory::Lease> AnalysisMemory::TryReserve(
    uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  if (!queue_.empty() || held_ + bytes > budget_) return std::nullopt;
  held_ += bytes;
  peak_ = std::max(peak_, held_);
  return Lease(this, bytes);
}

void AnalysisMemory::Release(uint64_t bytes) {
  {
    absl::MutexLock lock(&mu_);
    held_ -= bytes;
  }
  // What the query freed goes back to the system: each query runs on a
  // thread of its own heap, and a heap keeps what was freed in it
  // (common/memory.h), so without this every thread would hold its
  // largest query's peak after it.
  if (bytes >= kReturnFreedBytes) ReturnFreedMemory();
}

AnalysisMemory::Counters AnalysisMemory::counters() const {
  absl::MutexLock lock(&mu_);
  return {held_, peak_, waited_, refused_, static_cast<int64_t>(queue_.size())};
}

}  // namespace meridian
