// SqlSession: what the extension's tables of one SQLite connection share
// (docs/sql.md): the Meridian store they read (the connection's own file,
// opened again read-only through store/, so that the catalog, clock
// solutions and step summaries are read as every query reads them), each
// job's catalog and clocks once loaded, and what the last scan of `spans`
// read.
//
// A job's view is kept while the job is unchanged (its span count and last
// write, read through the connection each time a view is asked for), so a
// join that filters `spans` once per outer row loads the catalog once. The
// spans are read through the connection (its snapshot: the query's); the
// catalog, clocks and step summaries through the store's own connection,
// as they are when a scan of the job starts. Not
// thread-safe: SQLite calls a connection's virtual tables from one thread
// at a time.
#ifndef MERIDIAN_QUERY_SQL_SQL_SESSION_H_
#define MERIDIAN_QUERY_SQL_SQL_SESSION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"
#include "query/clocks/job_clocks.h"
#include "query/sql/sqlite_api.h"
#include "store/store.h"

namespace meridian {

// One job as the tables show it: its catalog, indexed, and its clocks once
// a query needed corrected times.
struct JobView {
  JobCatalog catalog;
  absl::flat_hash_map<int64_t, size_t> track_at;    // track id: tracks[i]
  absl::flat_hash_map<int64_t, size_t> process_at;  // process id
  absl::flat_hash_map<int64_t, size_t> op_at;       // operation id
  std::optional<JobClocks> clocks;
  std::optional<v1::StepsReply> steps;  // once a query read `steps`
  // The job's span count and last write as this connection saw them when
  // the view was made (its catalog may be newer: it is read through the
  // store's own connection).
  int64_t seen_spans = -1;
  int64_t seen_written_ns = -1;

  const JobInfo& job() const { return catalog.job; }
};

// What one scan of `spans` read (meridian_scan_stats()).
struct SpanScanCount {
  int64_t chunks = 0;       // stored chunks of the jobs it read
  int64_t chunks_read = 0;  // of them, decoded
  int64_t spans_decoded = 0;
  int64_t rows = 0;  // spans it gave SQLite
};

class SqlSession {
 public:
  // `db`: the connection (its main database is the store file, `path`).
  SqlSession(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  // Which jobs the tables show (`meridian sql`: those the caller may read,
  // and the one it named); by default, every job.
  void set_may_read(std::function<bool(const std::string&)> may_read) {
    may_read_ = std::move(may_read);
  }
  bool MayRead(const std::string& job) const {
    return !may_read_ || may_read_(job);
  }

  // While one is held, statements the tables prepare for themselves are
  // being prepared: an authorizer lets those read the store's tables
  // (sql_query.h refuses a user's own reads of them).
  class Internal {
   public:
    explicit Internal(SqlSession* session) : session_(session) {
      ++session_->internal_;
    }
    ~Internal() { --session_->internal_; }
    Internal(const Internal&) = delete;
    Internal& operator=(const Internal&) = delete;

   private:
    SqlSession* session_;
  };
  bool internal() const { return internal_ > 0; }
  // sqlite3_prepare_v2 of a statement the tables run for themselves.
  int PrepareInternal(const char* sql, sqlite3_stmt** stmt);

  // The jobs a scan reads, of those the session shows: the one named (none
  // if there is no such job), or every job, by ascending id.
  absl::StatusOr<std::vector<std::string>> JobNames(
      const std::optional<std::string>& name);

  // The view of job `name` as it is now; nullptr if there is no such job.
  // Shared: a cursor keeps the view it reads alive while the session moves
  // on to a newer one or lets it go.
  absl::StatusOr<std::shared_ptr<JobView>> View(const std::string& name);

  // The job's clocks, as `meridian export` places spans: the stored
  // solution where it is current, else solved now (one scan of the job).
  absl::StatusOr<const JobClocks*> Clocks(JobView* view);

  // The step summaries of job `name`, per step and rank, as `meridian
  // steps` gives them; an empty reply if no span carries a step.
  absl::StatusOr<v1::StepsReply> Steps(const std::string& name);

  SpanScanCount& last_scan() { return last_scan_; }

  // Whether the statement the tables serve must stop (`meridian sql`'s
  // bounds: time, memory, a client gone): checked where a table starts to
  // read a job, a chunk or a job's steps, work SQLite's own progress
  // handler does not see. Unset: never.
  void set_should_stop(std::function<bool()> should_stop) {
    should_stop_ = std::move(should_stop);
  }
  bool ShouldStop() const { return should_stop_ && should_stop_(); }

  // The last error a table met (a store it could not read, a chunk that
  // does not decode), for a caller that answers with a status rather than
  // SQLite's message.
  void set_error(const absl::Status& status) { error_ = status; }
  const absl::Status& error() const { return error_; }

 private:
  absl::StatusOr<Store*> OpenStore();
  absl::StatusOr<v1::StepsReply> MakeSteps(const JobView& view);

  // The job's span count and last write as this connection sees them;
  // nullopt if it has no such job.
  std::optional<std::pair<int64_t, int64_t>> Seen(int64_t job_id);

  sqlite3* db_;
  std::string path_;
  std::function<bool(const std::string&)> may_read_;
  std::function<bool()> should_stop_;
  absl::Status error_;
  int internal_ = 0;
  std::unique_ptr<Store> store_;
  absl::flat_hash_map<std::string, std::shared_ptr<JobView>> views_;
  SpanScanCount last_scan_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_SQL_SQL_SESSION_H_
