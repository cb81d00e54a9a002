// Store: Meridian's span store, as an interface (its operations below,
// and the results derived from the spans that it keeps: DerivedResults),
// with the guarantees every implementation keeps. Open() gives the store a
// location names: SqliteStore (sqlite_store.h, its schema there) for a
// file, ClickHouseStore (clickhouse_store.h) for clickhouse://.
//
// Threading: a Store is one connection, used by one thread at a time (the
// collector's BatchWriter owns the writing one). Open() more Stores on the
// same location for concurrent readers, which proceed while one writer
// commits (SQLite's WAL mode; ClickHouse's snapshots).
//
// Durability: Write() returns only after COMMIT, with synchronous=FULL by
// default, so an acknowledged batch survives a crash of the process or the
// machine. On any error Write() rolls back the whole call: nothing of it is
// stored and the store is unchanged.
#ifndef MERIDIAN_STORE_STORE_H_
#define MERIDIAN_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "meridian/v1/span.pb.h"
#include "store/write_observer.h"
#include "wire/process_totals.h"

namespace meridian {

struct SpanColumns;

struct StoreOptions {
  // synchronous=FULL (true) makes every commit durable against power loss;
  // false (NORMAL) only against a crash of the process.
  bool full_sync = true;
  bool read_only = false;
  // Entries each of the writer's id caches (strings, jobs, processes,
  // tracks, operations) keeps, forgetting the least recently used: bounded
  // memory whatever a client sends (5 M unique strings used to cost
  // 1.86 GB), at the price of a lookup in SQLite for what was forgotten.
  size_t max_cached_ids = 1 << 18;
  // ClickHouse: how far before the latest commit WriteMark is put (see
  // there). Tests that count exactly what is reported set 0.
  int64_t write_mark_margin_ns = 5'000'000'000;
  // How the store's error messages name it: empty, "store LOCATION" (its
  // path or ClickHouse URL). A server whose errors reach clients gives a
  // name without the location (the collector's queries: "the collector's
  // store"): where its files are is not the clients' business.
  std::string name_in_errors;
};

// The outcome of one batch in Store::Write.
struct BatchWriteResult {
  bool duplicate = false;  // stored before; nothing was written now
  int64_t spans_stored = 0;
};

struct JobInfo {
  int64_t id = 0;
  std::string name;
  int64_t epoch_ns = 0;  // stored span starts are relative to this
  int64_t min_start_ns = 0;
  int64_t max_end_ns = 0;
  int64_t max_dur_ns = 0;    // longest span
  int64_t max_chunk_ns = 0;  // longest chunk (first start to last end):
                             // bounds time-range scans
  int64_t spans = 0;
  int64_t chunks = 0;
  int64_t bytes = 0;       // its chunks' encoded bytes (the store's size of it)
  int64_t written_ns = 0;  // when a batch last wrote to it (wall clock)
  int32_t ranks = 0;       // distinct known ranks (>= 0) seen
  int32_t nodes = 0;
  int32_t world_size = 0;  // the largest a process reported; 0: unknown
  // Records its processes' probes dropped (each process's largest count,
  // summed).
  int64_t spans_dropped = 0;
};

struct ProcessInfo {
  int64_t id = 0;
  std::string node;
  int32_t rank = -1;
  int32_t local_rank = -1;
  int64_t pid = 0;
  int64_t dropped = 0;  // records its probe dropped (v1::Process.dropped)
};

struct TrackInfo {
  int64_t id = 0;
  int64_t process_id = 0;
  v1::TrackKind kind = v1::TRACK_KIND_THREAD;
  int64_t ext_id = 0;
  std::string name;
};

struct OpInfo {
  int64_t id = 0;
  v1::Category category = v1::CATEGORY_UNSPECIFIED;
  std::string name;
};

// Everything but the spans of one job: small, loaded whole.
struct JobCatalog {
  JobInfo job;
  std::vector<ProcessInfo> processes;  // ascending rank, then id
  std::vector<TrackInfo> tracks;       // ascending process, kind, ext_id
  std::vector<OpInfo> ops;             // ascending id
};

struct StoredArg {
  std::string key;
  enum class Type { kString, kInt, kReal } type = Type::kInt;
  std::string str;
  int64_t int_value = 0;
  double real_value = 0;
};

// One span as read back. Times are absolute Unix-epoch ns (raw node clock).
struct StoredSpan {
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t track_id = 0;
  int64_t op_id = 0;
  int64_t bytes = 0;
  std::optional<int32_t> peer;
  std::optional<int32_t> tag;
  uint64_t comm = 0;
  uint32_t comm_size = 0;
  std::optional<uint64_t> seq;
  std::optional<int64_t> step;
  std::optional<int32_t> partition;
  uint64_t correlation = 0;
  v1::SpanKind kind = v1::SPAN_KIND_COMPLETE;
  double value = 0;
  std::vector<StoredArg> args;
};

// Statistics another tool measured for one process and operation.
struct StoredOpTotals {
  int64_t process_id = 0;
  int64_t op_id = 0;
  int64_t calls = 0;
  int64_t bytes = 0;
  int64_t dur_ns = 0;
  struct Size {
    int32_t log2 = 0;  // bytes in [2^log2, 2^(log2+1)); -1: 0 bytes
    int64_t calls = 0;
    int64_t bytes = 0;
    int64_t dur_ns = 0;
  };
  std::vector<Size> sizes;  // ascending log2
};

// A process's totals (wire/process_totals.h), as stored: whose they are.
struct StoredProcessTotals : ProcessTotals {
  int64_t process_id = 0;
};

// A job's imported totals, by ascending process (then operation) id.
struct JobTotals {
  std::vector<StoredOpTotals> ops;
  std::vector<StoredProcessTotals> processes;
};

// A node's clock model as stored (see v1::ClockModel): the collector's time
// for node time t is t - (offset_ns + drift_ppb * (t - reference_ns) / 1e9).
struct NodeClockModel {
  int64_t reference_ns = 0;
  int64_t offset_ns = 0;
  int64_t drift_ppb = 0;
  int64_t uncertainty_ns = 0;
};

// What a query computed over a job and stored with it (its clock solution,
// query/clocks/job_clocks.h; how far its step summaries go,
// query/analysis/step_summaries.h: each writes and reads its `data`), with
// the state of the job it was computed for: current while the job's spans,
// last write and clock models are still these.
struct StoredJobResult {
  int64_t spans = 0;
  int64_t written_ns = 0;   // JobInfo::written_ns of the job
  int64_t models = 0;       // clock models of its nodes, all together
  int64_t computed_ns = 0;  // when (wall clock)
  std::string data;
};

// One step's summary as stored (query/analysis/step_summaries.h writes and
// reads `data`).
struct StoredStepSummary {
  int64_t step = 0;
  std::string data;
};

// Which spans of a job Scan() returns: a time range (ns since the job's
// first span), a step range and a set of tracks. Chunks that cannot hold a
// span in all three are not read at all. Other filters (categories, names)
// are applied by the caller against the catalog.
struct ScanRange {
  std::optional<int64_t> from_ns;  // spans ending at or after
  std::optional<int64_t> to_ns;    // spans starting before
  std::optional<int64_t> first_step;
  std::optional<int64_t> last_step;
  std::optional<absl::flat_hash_set<int64_t>> tracks;  // track ids
  // Only chunks written after this Store::WriteMark (what arrived since).
  std::optional<int64_t> written_after;

  // Whether the range is the whole job.
  bool whole_job() const {
    return !from_ns && !to_ns && !first_step && !last_step && !tracks &&
           !written_after;
  }
};

// What one Scan read, for benchmarks and tests.
struct ScanStats {
  int64_t chunks_read = 0;  // rows decompressed and decoded
  int64_t spans_decoded = 0;
  // The distinct chunks (row ids) decoded: a caller that scans twice may
  // decode a chunk twice.
  absl::flat_hash_set<int64_t> chunk_ids;
};

// What a store keeps of the results derived from a job's spans, so that a
// query of a finished job reads them instead of solving again: its clock
// solution and its step summaries. A cache: each can be made again from
// the spans, and DeleteJob deletes them with the job.
class DerivedResults {
 public:
  virtual ~DerivedResults() = default;

  // The clock solution last saved for job `job_id` (nullopt if none, or if
  // the job was deleted since), and saving one (replacing the older).
  // DeleteJob deletes it with the job.
  virtual absl::StatusOr<std::optional<StoredJobResult>> LoadClockSolution(
      int64_t job_id) = 0;
  virtual absl::Status SaveClockSolution(int64_t job_id,
                                         const StoredJobResult& solution) = 0;

  // Step summaries of job `job_id`. Saving stores `steps`, each replacing
  // the summary stored for its step, and then `state` (what the summaries
  // cover), replacing the older: a reader that finds a state finds the
  // summaries saved with it. LoadSummaryState: the last state saved
  // (nullopt if none, or if the job was deleted since). ScanStepSummaries:
  // each stored summary of a step >= `first_step`, by ascending step, until
  // `visit` returns false. DeleteJob deletes them with the job.
  virtual absl::Status SaveStepSummaries(
      int64_t job_id, const std::vector<StoredStepSummary>& steps,
      const StoredJobResult& state) = 0;
  virtual absl::StatusOr<std::optional<StoredJobResult>> LoadSummaryState(
      int64_t job_id) = 0;
  virtual absl::Status ScanStepSummaries(
      int64_t job_id, int64_t first_step,
      const std::function<bool(const StoredStepSummary&)>& visit) = 0;
};

class Store : public DerivedResults {
 public:
  // Opens (creating if needed) the store at `path`. Fails with a message that
  // names the path if the file cannot be opened, is not a Meridian store, or
  // has a schema version this build does not know.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path,
                                                     StoreOptions options = {});
  virtual ~Store() = default;

  // Stores the given valid batches (see ValidateBatch) in one transaction.
  // Returns one result per batch, in order. A batch whose (agent_id,
  // batch_seq) is already stored, or repeats an earlier one of this call, is
  // reported as duplicate and not stored again.
  // `decoded`, if not empty, holds for each batch its chunks as
  // ValidateBatch decoded them (or an empty vector: decode them here); they
  // are used, and consumed, instead of decoding the chunks again.
  virtual absl::StatusOr<std::vector<BatchWriteResult>> Write(
      absl::Span<const v1::Batch* const> batches,
      absl::Span<std::vector<SpanColumns>* const> decoded = {}) = 0;

  // Starts a read transaction: from now until the Store is destroyed, every
  // read sees the store as it is at this call, however much is committed
  // meanwhile. A query calls it first, so that the catalog it loads knows
  // every track and operation of the spans it then scans.
  virtual absl::Status BeginSnapshot() = 0;

  virtual absl::StatusOr<std::vector<JobInfo>> ListJobs() = 0;
  // Entries in the writer's id caches (for tests of their bound).
  virtual size_t cached_ids() const = 0;
  // Tells `observer` (not owned; null: no one) of this store's writes from
  // now on, as write_observer.h says. The SQLite store tells; others
  // ignore it.
  virtual void Observe(WriteObserver* observer) { (void)observer; }

  // Deletes job `name` whole (its chunks, processes, tracks, agents) in one
  // transaction; returns the spans it held. NOT_FOUND if there is none.
  // Strings, operations and clock models stay: other jobs may share them.
  // Spans that arrive for the job later start it afresh.
  virtual absl::StatusOr<int64_t> DeleteJob(const std::string& name) = 0;
  // Deletes every job whose last span ended before `end_before_ns`, and
  // every job without spans (imported statistics) last written before it
  // (--retention-days); returns their names.
  virtual absl::StatusOr<std::vector<std::string>> DeleteJobsEndedBefore(
      int64_t end_before_ns) = 0;

  // NOT_FOUND, naming the job and the jobs that exist, if there is no such job.
  virtual absl::StatusOr<JobCatalog> LoadCatalog(const std::string& job) = 0;

  // Calls `visit` for each span of `job` in `range`, in ascending start time
  // (ties: track id, then arrival). Stops early, returning OK, when `visit`
  // returns false. Reads incrementally: chunks are decoded as the merge
  // reaches them, and only their spans in `range` are kept, so memory holds
  // only those spans of the chunks that overlap in time (one or two per
  // track), whatever the job's size. DATA_LOSS, naming the chunk,
  // if a stored chunk does not decode. `stats`, if given, gets what was read.
  virtual absl::Status Scan(const JobInfo& job, const ScanRange& range,
                            const std::function<bool(const StoredSpan&)>& visit,
                            ScanStats* stats = nullptr) = 0;

  // Every clock model stored for `node` by an agent that delivered spans of
  // job `job_id`, by ascending reference_ns; empty if none.
  virtual absl::StatusOr<std::vector<NodeClockModel>> LoadClockModels(
      const std::string& node, int64_t job_id) = 0;

  // The lowest and highest step of job `job_id`'s spans; nullopt if none
  // carries a step.
  virtual absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> StepRange(
      int64_t job_id) = 0;

  // Each track of the job that has spans with a step, with its highest
  // step, by ascending track id (step summaries: which steps every rank has
  // gone past).
  virtual absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
  TrackLastSteps(int64_t job_id) = 0;

  // Where job `job_id`'s writes stand: a number that every later write of
  // spans to the job passes (SQLite: its highest chunk id). ClickHouse: its
  // latest commit time less StoreOptions::write_mark_margin_ns (5 s), so a
  // write committed up to 5 s before that one but visible only after it
  // still passes (two collectors, or clocks apart by less than that;
  // snapshots assume as much); writes of those 5 s are reported again. 0 if
  // it has no spans.
  virtual absl::StatusOr<int64_t> WriteMark(int64_t job_id) = 0;
  // The step ranges (lowest, highest step) of job `job_id`'s chunks written
  // after `mark` (WriteMark) whose lowest step is at most `up_to`, each
  // range once, ascending (step summaries: spans that arrived late for
  // steps already summarised).
  virtual absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
  StepsWrittenAfter(int64_t job_id, int64_t mark, int64_t up_to) = 0;

  // The statistics imported for job `job_id` (Batch.op_totals and
  // process_totals); empty if none.
  virtual absl::StatusOr<JobTotals> LoadTotals(int64_t job_id) = 0;

  // Size of the database file plus its WAL, in bytes.
  virtual absl::StatusOr<int64_t> FileBytes() = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_STORE_STORE_H_
