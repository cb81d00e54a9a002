// ClickHouseStore: the Store (store.h) on a ClickHouse server, for sites
// that outgrow one SQLite file: several collectors write one database, and
// every query answers as it does on SQLite. Store::Open gives one for a
// location "clickhouse://HOST[:PORT][/DATABASE][?cluster=NAME&shards=DB]"
// (PORT: ClickHouse's HTTP port, 8123 by default; DATABASE: "meridian" by
// default; cluster and shards: Distributed tables over database DB on the
// shards of cluster NAME, ClickHouseLayout). The user and
// password never come from the location (it is on command lines, which
// other users of the machine can read): MERIDIAN_CLICKHOUSE_CREDENTIALS
// names a file holding "USER:PASSWORD" (mode 0600 or stricter), or else
// MERIDIAN_CLICKHOUSE_USER and MERIDIAN_CLICKHOUSE_PASSWORD hold them
// (default: user "default", no password).
//
// Only what ClickHouse 18.16 (Debian 12's) and current releases both have
// is used: MergeTree and ReplacingMergeTree tables with ORDER BY, the HTTP
// interface, RowBinary, tuple IN subqueries, transform(), cityHash64 and
// ALTER TABLE ... DELETE. docs/clickhouse.md has the schema, column by
// column.
//
// Ids. Rows are written by several collectors that never coordinate, so
// every id is a content hash: the first 63 bits of SHA-256 over what the
// row is (a string's bytes; a job's name; a process's job, node, rank,
// local rank and pid; a track's process, kind and id; an operation's
// category and name). Every writer computes the same id for the same thing;
// a client cannot craft two things with one id.
//
// Exactly once, without transactions. Each Write is one attempt (a random
// 63-bit id). Its rows (catalog rows, chunks, ring marks) are inserted
// first; its `batches` rows last: they are the commit record. Reads see
// only chunks, totals and ring marks of committed attempts, and of the
// attempts recorded for one (agent, seq) only the lowest: a collector
// SIGKILLed between its chunks and its record left rows nobody reads, and
// the agent's resend (to any collector) stores the batch once. A batch is a
// duplicate when a `batches` row has its (agent, seq) already.
//
// Snapshots: every row carries its writer's wall-clock time (written_ns);
// BeginSnapshot fixes a time and reads see only rows written up to it. A
// deleted job gets a tombstone (deleted_jobs) and reads skip its rows
// written up to the deletion; ALTER TABLE ... DELETE then reclaims them in
// the background. Both compare the clocks of different collectors: keep
// them synchronized (NTP), as the collector's own clock service assumes.
//
// Threading: one store per thread, as for SQLite.
//
// Its files: clickhouse_location.cc (locations), clickhouse_schema.cc (the
// tables, opening a store), clickhouse_store_write.cc (writes),
// clickhouse_store.cc (reads and the derived results),
// clickhouse_store_parts.h (what they share).
#ifndef MERIDIAN_STORE_CLICKHOUSE_STORE_H_
#define MERIDIAN_STORE_CLICKHOUSE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/clickhouse_client.h"
#include "store/store.h"

namespace meridian {

// A store over a cluster's shards: its tables are Distributed tables over
// database `shards` on the shards of `cluster` (ClickHouse's remote_servers
// configuration), sharded by job. Empty: the tables hold the rows.
struct ClickHouseLayout {
  std::string cluster;
  std::string shards;
};

// Whether `location` names a ClickHouse store (starts "clickhouse://").
bool IsClickHouseLocation(const std::string& location);

// The endpoint `location` names, with the credentials from the environment
// (see above), and in *layout (if given) its ?cluster=NAME&shards=DATABASE.
// INVALID_ARGUMENT naming what is wrong: a location with credentials in
// it, a bad port, a name that is not [A-Za-z0-9_]+; a credentials file
// others may read, or unreadable.
absl::StatusOr<ClickHouseEndpoint> ParseClickHouseLocation(
    const std::string& location, ClickHouseLayout* layout = nullptr);

class ClickHouseStore final : public Store {
 public:
  // Opens the store at `location`. Unless options.read_only, creates the
  // database and its tables if they are missing (the first collector to
  // start does), and refuses a database another schema version made.
  static absl::StatusOr<std::unique_ptr<ClickHouseStore>> Open(
      const std::string& location, StoreOptions options = {});
  ~ClickHouseStore() override;

  // Store's operations (store.h says what each does).
  absl::StatusOr<std::vector<BatchWriteResult>> Write(
      absl::Span<const v1::Batch* const> batches,
      absl::Span<std::vector<SpanColumns>* const> decoded = {}) override;
  absl::Status BeginSnapshot() override;
  absl::StatusOr<std::vector<JobInfo>> ListJobs() override;
  size_t cached_ids() const override;
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
  // The database's active parts on disk, every table.
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

  // Tests of exactly-once only: called in Write after its chunks and ring
  // marks are inserted and before its commit record; an error fails the
  // Write there (and a test may SIGKILL the collector there).
  void set_before_commit_for_testing(std::function<absl::Status()> hook) {
    before_commit_ = std::move(hook);
  }

 private:
  // Whether a table of stored results is there: always for a writer (it
  // creates them); for a reader, if it was when the store was opened.
  bool HasTable(const std::string& table) const;
  // A job's latest row in clock_solutions or summary_states (whose
  // StoredJobResult::computed_ns column is `time_column`), and adding one.
  absl::StatusOr<std::optional<StoredJobResult>> LoadResult(
      const char* table, const char* time_column, int64_t job_id);
  absl::Status SaveResult(const char* table, int64_t job_id,
                          const StoredJobResult& result);
  struct Caches;
  struct WriteRows;

  ClickHouseStore(std::unique_ptr<ClickHouseClient> client,
                  std::string location, size_t max_cached_ids);
  absl::Status CreateSchema();
  int64_t Now();
  // The filter a job's rows pass: written after the job's last deletion and
  // up to the snapshot, by a committed attempt (`committed`: the table has
  // agent, seq and attempt columns).
  absl::StatusOr<std::string> JobRowFilter(int64_t job_id, bool committed);
  // The condition a row of job `job_id`'s write attempt passes if that
  // attempt is the one read: committed, the lowest of its (agent, seq).
  // With `after` (a WriteMark): only if that attempt committed after it.
  std::string Committed(int64_t job_id,
                        std::optional<int64_t> after = std::nullopt) const;
  // The jobs (all, or only `only`) as ListJobs describes them.
  absl::StatusOr<std::vector<JobInfo>> Jobs(std::optional<int64_t> only);
  // job id -> the time of its last deletion; kept (deletions_) for the
  // snapshot once read in one.
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> Deletions();
  // Write's steps: which of `batches` are stored already (into *stored)
  // and what their rings' records stored reach (rows->marks); then each
  // new batch's rows (WriteOne); then inserting them, every table's rows
  // before the commit records.
  absl::Status ReadStored(absl::Span<const v1::Batch* const> batches,
                          std::set<std::pair<std::string, int64_t>>* stored,
                          WriteRows* rows);
  absl::Status Insert(int64_t now, WriteRows& rows);
  absl::Status WriteOne(const v1::Batch& batch,
                        std::vector<SpanColumns>* decoded, int64_t now,
                        WriteRows* rows, BatchWriteResult* result);
  // WriteOne's steps, in order (clickhouse_store_write.cc): each adds the
  // batch's rows of its tables to its WriteRows.
  struct BatchRows;
  void WriteStrings(BatchRows& b);
  void WriteProcesses(BatchRows& b);  // and the commit records
  void WriteTracks(BatchRows& b);
  void WriteClockModel(BatchRows& b);
  void WriteTotals(BatchRows& b);
  // The spans (less what the rings stored before) and the rings' marks;
  // the spans stored.
  absl::StatusOr<int64_t> WriteSpans(BatchRows& b,
                                     std::vector<SpanColumns>* decoded);
  absl::Status WriteTrackChunks(BatchRows& b, int track, SpanColumns& spans);
  // The operation (category, the batch's string `name`), its row added if
  // new.
  int64_t OpId(BatchRows& b, int64_t category, int64_t name);
  // The strings whose ids `ids_subquery` selects, appended to *out.
  absl::Status LookupStrings(const std::string& ids_subquery,
                             std::vector<std::pair<int64_t, std::string>>* out);

  std::unique_ptr<ClickHouseClient> client_;
  std::string location_;
  std::string named_;  // in error messages (StoreOptions::name_in_errors)
  const size_t max_cached_ids_;
  std::unique_ptr<Caches> caches_;
  std::mt19937_64 random_;
  int64_t last_now_ = 0;
  int64_t snapshot_ns_ = std::numeric_limits<int64_t>::max();
  std::optional<std::vector<std::pair<int64_t, int64_t>>> deletions_;
  bool read_only_ = false;
  int64_t write_mark_margin_ns_ = 0;  // StoreOptions::write_mark_margin_ns
  ClickHouseLayout layout_;
  std::function<absl::Status()> before_commit_;
  // A reader's tables of stored results (HasTable).
  absl::flat_hash_set<std::string> result_tables_;
};

}  // namespace meridian

#endif  // MERIDIAN_STORE_CLICKHOUSE_STORE_H_
