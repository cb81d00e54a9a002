// AnalysisMemory: the collector's --analysis-memory-mib, held by all its
// queries together rather than by each alone.
//
// Before a query loads what it analyses, it reserves what that will hold
// (its estimate: bytes a span of its kind times the spans it reads). A
// reservation that fits beside those held is granted at once; one that does
// not waits, first come first served, for at most `wait`, and is then
// refused: RESOURCE_EXHAUSTED saying how much the other queries hold and
// to retry. While a reservation waits, `reclaim` (if set) is called to let
// go of what is only kept for later (the kept whole-job analysis): before
// it waits, and by the oldest waiting every kReclaimEvery, since what is
// kept is kept again as queries end.
//
// A lease of at least kReturnFreedBytes returns the process's freed memory
// to the system as it ends (ReturnFreedMemory): declare it before what it
// covers, so that it ends after that is freed.
//
// A query reserves once, for all it holds: it never waits for memory while
// it holds some, so queries cannot wait on each other in a cycle.
// Thread-safe.
#ifndef MERIDIAN_QUERY_ANALYSIS_MEMORY_H_
#define MERIDIAN_QUERY_ANALYSIS_MEMORY_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace meridian {

class AnalysisMemory {
 public:
  static constexpr uint64_t kReturnFreedBytes = uint64_t{1} << 20;
  static constexpr absl::Duration kReclaimEvery = absl::Milliseconds(50);

  // Bytes reserved until it is destroyed (or moved from). Outlives nothing:
  // destroy it before its AnalysisMemory.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    uint64_t bytes() const { return bytes_; }

   private:
    friend class AnalysisMemory;
    Lease(AnalysisMemory* memory, uint64_t bytes)
        : memory_(memory), bytes_(bytes) {}
    AnalysisMemory* memory_ = nullptr;
    uint64_t bytes_ = 0;
  };

  AnalysisMemory(uint64_t budget, absl::Duration wait)
      : budget_(budget), wait_(wait) {}

  // Called, without any lock of this class held, when a reservation must
  // wait: it should drop what is kept but not in use.
  void set_reclaim(std::function<void()> reclaim) {
    reclaim_ = std::move(reclaim);
  }

  // `bytes` (at most the budget; more is reserved as the whole budget) for
  // `what` (e.g. "critical path of job J", named in the refusal).
  absl::StatusOr<Lease> Reserve(uint64_t bytes, const std::string& what);

  // `bytes` if they fit now beside those held and nobody waits, without
  // waiting (for what is kept between queries: a job's clock state);
  // nullopt otherwise.
  std::optional<Lease> TryReserve(uint64_t bytes);

  // Whether `status` is a refusal of Reserve (no room now: retrying can
  // help), not a query too large for the budget at all.
  static bool IsBusy(const absl::Status& status);

  uint64_t budget() const { return budget_; }
  struct Counters {
    uint64_t held = 0;   // bytes reserved now
    uint64_t peak = 0;   // the most ever reserved at once
    int64_t waited = 0;  // reservations that waited (granted or not)
    int64_t refused = 0;
    int64_t waiting = 0;  // now
  };
  Counters counters() const;

 private:
  void Release(uint64_t bytes);

  const uint64_t budget_;
  const absl::Duration wait_;
  std::function<void()> reclaim_;
  mutable absl::Mutex mu_;
  uint64_t held_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t peak_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t waited_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<uint64_t> queue_ ABSL_GUARDED_BY(mu_);  // waiting, oldest first
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_MEMORY_H_
