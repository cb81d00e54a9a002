// EvidenceLog: the clock evidence (clock_evidence.h) of the chunks the
// collector writes, made from the columns ingest already decoded as the
// store writes them (it is the store's WriteObserver), so that a job's clock
// update takes it from here instead of reading, decompressing and decoding
// the job's chunks again (JobClocks::Update; docs/clocks.md, "Evidence").
//
// Contract:
//   - It holds, per job, each committed chunk's id, track and first start
//     and its evidence spans, as Gather reads them from the stored chunk,
//     for the chunks written since it first heard of the job or since the
//     job's last Take. A rolled-back write leaves nothing.
//   - Take(job, after, upto, chunks) hands over the evidence of the job's
//     chunks with ids in (after, upto] and their tracks' first starts, in
//     the order Store::Scan reads them (ascending start, then track, then
//     chunk id, then place in the chunk), if it holds exactly `chunks` such
//     chunks: the caller's count from the store (the catalog and write mark
//     of one snapshot), so that then it holds all of them. Otherwise nullopt
//     (the caller reads the chunks). Either way it forgets the job's chunks
//     up to `upto`.
//   - Bounded: at most `max_bytes` held together. Past it, the jobs that
//     took in a chunk least recently are forgotten first, the one taking it
//     last (their next update reads their chunks); each forgetting is
//     counted.
//   - Thread-safe: the store's writer tells, any thread takes.
#ifndef MERIDIAN_QUERY_CLOCKS_EVIDENCE_LOG_H_
#define MERIDIAN_QUERY_CLOCKS_EVIDENCE_LOG_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "query/clocks/clock_evidence.h"
#include "store/write_observer.h"

namespace meridian {

class EvidenceLog final : public WriteObserver {
 public:
  explicit EvidenceLog(int64_t max_bytes);

  std::optional<ClockEvidence> Take(int64_t job_id, int64_t after, int64_t upto,
                                    int64_t chunks);

  struct Counters {
    int64_t bytes = 0;      // held now
    int64_t jobs = 0;       // held now
    int64_t taken = 0;      // Takes that handed evidence over
    int64_t missed = 0;     // Takes that did not hold every chunk
    int64_t forgotten = 0;  // jobs forgotten for the bound
  };
  Counters counters() const;

  // WriteObserver.
  void Strings(const v1::Batch& batch,
               const std::vector<int64_t>& string_id) override;
  void Operation(int64_t op_id, v1::Category category,
                 absl::string_view name) override;
  void Chunk(int64_t job_id, int64_t track_id, int64_t chunk_id,
             const SpanColumns& spans) override;
  void Committed() override;
  void RolledBack() override;
  void Deleted(int64_t job_id) override;

 private:
  struct LoggedChunk {
    int64_t job_id = 0;
    int64_t id = 0;
    int64_t track = 0;
    int64_t first_start = 0;
    bool unreadable = false;  // an arg named a string the batch lacks
    int64_t bytes = 0;        // BytesOf, once made
    std::vector<EvidenceSpan> spans;
  };
  struct JobLog {
    std::vector<LoggedChunk> chunks;  // ascending id
    int64_t bytes = 0;
    int64_t used = 0;  // when it last took in a chunk (a sequence number)
  };
  static int64_t BytesOf(const LoggedChunk& chunk);
  // The role told for `op_id`; null if it was not told.
  const std::optional<SpanRole>* RoleOf(int64_t op_id);
  // The text of the store's string `id`, of the batch told by Strings;
  // null if it names none of them.
  const std::string* TextOf(int64_t id);
  void ForgetLocked(int64_t job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // In Scan's order: the chunks' spans, merged.
  static ClockEvidence Merge(std::vector<LoggedChunk> chunks);

  const int64_t max_bytes_;
  // The writer's, unlocked: the write being made.
  const v1::Batch* batch_ = nullptr;
  const std::vector<int64_t>* string_id_ = nullptr;
  absl::flat_hash_map<int64_t, int> batch_index_;  // of string_id_, lazily
  // Operation id -> evidence role (nullopt: not evidence), as told.
  absl::flat_hash_map<int64_t, std::optional<SpanRole>> roles_;
  int64_t last_op_ = 0;  // RoleOf's last answer (spans run in one op)
  const std::optional<SpanRole>* last_role_ = nullptr;
  std::vector<LoggedChunk> pending_;
  StoredSpan scratch_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<int64_t, JobLog> jobs_ ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;
  Counters counters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_CLOCKS_EVIDENCE_LOG_H_
