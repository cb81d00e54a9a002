// SqliteStore: the Store (store.h) on an embedded SQLite file, with the
// threading and durability store.h describes. Store::Open gives one.
//
// Schema (docs/wire-and-store.md explains every column):
//   strings(id, s)                       every distinct string, once
//   jobs(id, name, epoch_ns, ...)        one row per job, with running totals
//   processes(id, job, node, rank, ...)  traced processes
//   tracks(id, process, kind, ext_id, name)
//   ops(id, category, name)              (category, name) pairs: "operations"
//   batches(agent, seq, ...)             every batch stored: exactly-once
//   chunks(id, job, track, first_start, max_end, count, min_step,
//        max_step, data)  one row per chunk of one track's spans
//        (wire/span_chunk.h), indexed by (job, first_start); times relative
//        to the job's epoch_ns. A scan reads only the chunks whose time,
//        step and track bounds meet its range, and merges them in time order.
//   agent_clock_models(agent, node, reference_ns, offset_ns, drift_ppb,
//        uncertainty_ns)  every clock model an agent's batches carried for
//        a node, once each
//   job_agents(job, agent)  which agents delivered spans of each job: a
//        job's timeline uses only their clock models
//   op_totals(process, op, calls, bytes, dur_ns), op_size_totals(process,
//        op, log2, calls, bytes, dur_ns), process_totals(process, comm_ns,
//        elapsed_ns, source)  statistics another tool measured (imported
//        mpitrace profiles), without spans; the latest replaces the older
//   ring_marks(incarnation, ring, end_record)  how far each probe ring's
//        records are stored: records a restarted agent sends again are
//        stored once
//   meta(key, value)  the schema's version
//
// Step summaries and their state (step_summaries, summary_states) and clock
// solutions (clock_solutions) are the DerivedResults.
//
// Its files: sqlite_schema.cc (the schema, its upgrades, opening a store),
// sqlite_store_write.cc (writes), sqlite_store.cc (reads and the derived
// results), sqlite_store_parts.h (their statements and id caches).
#ifndef MERIDIAN_STORE_SQLITE_STORE_H_
#define MERIDIAN_STORE_SQLITE_STORE_H_

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/store.h"

namespace meridian {

// The statements of one table of a job's stored results (sqlite_store.cc).
struct SqliteResultTable;

class SqliteStore final : public Store {
 public:
  // Store's operations (store.h says what each does).
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(
      const std::string& path, StoreOptions options = {});
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;
  absl::StatusOr<std::vector<BatchWriteResult>> Write(
      absl::Span<const v1::Batch* const> batches,
      absl::Span<std::vector<SpanColumns>* const> decoded = {}) override;
  absl::Status BeginSnapshot() override;
  absl::StatusOr<std::vector<JobInfo>> ListJobs() override;
  size_t cached_ids() const override;
  void Observe(WriteObserver* observer) override;
  absl::StatusOr<int64_t> DeleteJob(const std::string& name) override;
  absl::StatusOr<std::vector<std::string>> DeleteJobsEndedBefore(
      int64_t end_before_ns) override;
  absl::StatusOr<JobCatalog> LoadCatalog(const std::string& job) override;
  absl::Status Scan(const JobInfo& job, const ScanRange& range,
                    const std::function<bool(const StoredSpan&)>& visit,
                    ScanStats* stats = nullptr) override;
  absl::StatusOr<std::vector<NodeClockModel>> LoadClockModels(
      const std::string& node, int64_t job_id) override;
  absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> StepRange(
      int64_t job_id) override;
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> TrackLastSteps(
      int64_t job_id) override;
  absl::StatusOr<int64_t> WriteMark(int64_t job_id) override;
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> StepsWrittenAfter(
      int64_t job_id, int64_t mark, int64_t up_to) override;
  absl::StatusOr<JobTotals> LoadTotals(int64_t job_id) override;
  absl::StatusOr<int64_t> FileBytes() override;
  absl::StatusOr<std::optional<StoredJobResult>> LoadClockSolution(
      int64_t job_id) override;
  absl::Status SaveClockSolution(int64_t job_id,
                                 const StoredJobResult& solution) override;
  absl::Status SaveStepSummaries(int64_t job_id,
                                 const std::vector<StoredStepSummary>& steps,
                                 const StoredJobResult& state) override;
  absl::StatusOr<std::optional<StoredJobResult>> LoadSummaryState(
      int64_t job_id) override;
  absl::Status ScanStepSummaries(
      int64_t job_id, int64_t first_step,
      const std::function<bool(const StoredStepSummary&)>& visit) override;

 private:
  // A job's row in clock_solutions or summary_states (their statements:
  // sqlite_store.cc), and storing one.
  absl::StatusOr<std::optional<StoredJobResult>> LoadResult(
      const SqliteResultTable& table, int64_t job_id);
  absl::Status SaveResult(const SqliteResultTable& table, int64_t job_id,
                          const StoredJobResult& result);
  // The count that `count_sql` ("SELECT count(*) FROM sqlite_master ...")
  // gives: whether tables exist. A store opened read-only that an older
  // Meridian made lacks the tables a writer adds when it opens one.
  absl::StatusOr<int64_t> CountTables(const char* count_sql);
  class Statement;
  class ScanSource;
  struct Caches;

  SqliteStore(sqlite3* db, std::string path, std::string named,
              size_t max_cached_ids);
  absl::Status Exec(const char* sql);
  absl::Status Fail(const char* what) const;
  absl::Status RefuseOlderVersion();
  // One batch, in the writer's transaction: RecordBatch, then (unless it is
  // a duplicate) StoreClockModel, InternStrings, StoreProcesses,
  // StoreTracks, SpansByTrack and WriteTrackSpans for each track.
  absl::Status WriteOne(const v1::Batch& batch,
                        std::vector<SpanColumns>* decoded,
                        BatchWriteResult* result);
  // Records (agent, seq); false if it was recorded before (a duplicate).
  absl::StatusOr<bool> RecordBatch(const v1::Batch& batch);
  // Stores the batch's clock model, if any, once per (agent, node,
  // reference_ns).
  absl::Status StoreClockModel(const v1::Batch& batch);
  // The store's id of each of the batch's strings.
  absl::StatusOr<std::vector<int64_t>> InternStrings(const v1::Batch& batch);
  struct JobRef {
    int64_t id;
    int64_t epoch_ns;
  };
  struct ProcessRef {
    int64_t id;
    JobRef job;
  };
  // The job named `name`, created with epoch `epoch_ns` if it is new.
  absl::StatusOr<JobRef> StoreJob(const std::string& name, int64_t epoch_ns);
  // The store's process (and its job) of each of the batch's processes.
  absl::StatusOr<std::vector<ProcessRef>> StoreProcesses(
      const v1::Batch& batch, const std::vector<int64_t>& string_id);
  // Records that the batch's agent delivered spans of each of its jobs.
  absl::Status RecordJobAgents(const v1::Batch& batch,
                               const std::vector<ProcessRef>& processes);
  // The batch's op and process totals, replacing those stored before.
  absl::Status StoreTotals(const v1::Batch& batch,
                           const std::vector<ProcessRef>& process,
                           const std::vector<int64_t>& string_id);
  // The store's track id of each of the batch's tracks.
  absl::StatusOr<std::vector<int64_t>> StoreTracks(
      const v1::Batch& batch, const std::vector<ProcessRef>& process,
      const std::vector<int64_t>& string_id);
  // The batch's spans (messages and chunks, less what its rings already
  // stored) per track, with store ids. `decoded`: the validator's decoding
  // of the chunks, or null.
  absl::StatusOr<std::vector<SpanColumns>> SpansByTrack(
      const v1::Batch& batch, std::vector<SpanColumns>* decoded,
      const std::vector<int64_t>& string_id);
  absl::StatusOr<int64_t> OpId(int64_t category, int64_t name_id);
  // Turns a batch's ids in `spans` (name and category, arg strings) into
  // the store's: operation ids and string ids.
  absl::Status ToStoreIds(const v1::Batch& batch,
                          const std::vector<int64_t>& string_id,
                          SpanColumns* spans);
  absl::StatusOr<std::vector<uint64_t>> RingMarks(const v1::Batch& batch);
  absl::Status WriteTrackSpans(int64_t job_id, int64_t epoch_ns, int64_t track,
                               SpanColumns* spans);
  absl::StatusOr<int64_t> InternString(const std::string& s);
  absl::StatusOr<std::string> LookupString(int64_t id);
  absl::StatusOr<Statement*> Prepare(const char* sql);
  // Runs a bound INSERT ... RETURNING id[, x...] statement and returns the
  // id (and the `more` columns after it in more_columns[0..more)); `what`
  // names the step in the error.
  absl::StatusOr<int64_t> InsertReturningId(Statement* insert, const char* what,
                                            int64_t* more_columns = nullptr,
                                            int more = 1);

  sqlite3* db_;
  std::string path_;
  std::string named_;  // in error messages (StoreOptions::name_in_errors)
  std::unique_ptr<Caches> caches_;
  WriteObserver* observer_ = nullptr;  // Observe
  const size_t max_cached_ids_;
  std::vector<std::unique_ptr<Statement>> statements_;
  absl::flat_hash_map<const char*, Statement*> statement_by_sql_;
  absl::flat_hash_map<int64_t, std::string> string_by_id_;  // read cache
};

}  // namespace meridian

#endif  // MERIDIAN_STORE_SQLITE_STORE_H_
