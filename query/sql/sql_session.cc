#include "query/sql/sql_session.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "query/analysis/step_summaries.h"
#include "query/sql/tables.h"

namespace meridian {
namespace {

// Views kept at once: a query over every job of a large store holds a few.
constexpr size_t kMaxViews = 16;
// What a step summary may take to make (StepSummaries::Update's budget).
constexpr uint64_t kStepBudgetBytes = uint64_t{1} << 30;

// A statement the session runs on the connection, finalized when it goes.
class HostStatement {
 public:
  HostStatement(SqlSession* session, const char* sql) {
    rc_ = session->PrepareInternal(sql, &stmt_);
  }
  ~HostStatement() { sqlite3_finalize(stmt_); }
  HostStatement(const HostStatement&) = delete;
  HostStatement& operator=(const HostStatement&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

absl::Status HostError(sqlite3* db, absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, " failed: ", sqlite3_errmsg(db),
                                          " (is this a Meridian store, schema ",
                                          kSqlStoreSchema, "?)"));
}

}  // namespace

int SqlSession::PrepareInternal(const char* sql, sqlite3_stmt** stmt) {
  Internal internal(this);
  return sqlite3_prepare_v2(db_, sql, -1, stmt, nullptr);
}

absl::StatusOr<Store*> SqlSession::OpenStore() {
  if (store_ != nullptr) return store_.get();
  if (path_.empty()) {
    return absl::FailedPreconditionError(
        "the Meridian tables read a store file: this connection's main "
        "database is not a file");
  }
  StoreOptions options;
  options.read_only = true;
  auto store = Store::Open(path_, options);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  return store_.get();
}

absl::StatusOr<std::vector<std::string>> SqlSession::JobNames(
    const std::optional<std::string>& name) {
  HostStatement select(this, name ? "SELECT name FROM main.jobs WHERE name=?1"
                                  : "SELECT name FROM main.jobs ORDER BY id");
  if (!select.ok()) return HostError(db_, "listing the jobs");
  if (name) {
    sqlite3_bind_text(select.get(), 1, name->data(),
                      static_cast<int>(name->size()), SQLITE_TRANSIENT);
  }
  std::vector<std::string> names;
  int rc;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(select.get(), 0);
    std::string job(reinterpret_cast<const char*>(text),
                    sqlite3_column_bytes(select.get(), 0));
    if (MayRead(job)) names.push_back(std::move(job));
  }
  if (rc != SQLITE_DONE) return HostError(db_, "listing the jobs");
  return names;
}

std::optional<std::pair<int64_t, int64_t>> SqlSession::Seen(int64_t job_id) {
  HostStatement select(this,
                       "SELECT spans, written_ns FROM main.jobs WHERE id=?1");
  if (!select.ok()) return std::nullopt;
  sqlite3_bind_int64(select.get(), 1, job_id);
  if (sqlite3_step(select.get()) != SQLITE_ROW) return std::nullopt;
  return std::make_pair(sqlite3_column_int64(select.get(), 0),
                        sqlite3_column_int64(select.get(), 1));
}

absl::StatusOr<std::shared_ptr<JobView>> SqlSession::View(
    const std::string& name) {
  if (!MayRead(name)) return nullptr;
  auto found = views_.find(name);
  if (found != views_.end()) {
    // Current while the job is as this connection saw it when the view was
    // made: a job still being written keeps its view for the query.
    auto seen = Seen(found->second->job().id);
    if (seen && seen->first == found->second->seen_spans &&
        seen->second == found->second->seen_written_ns) {
      return found->second;
    }
  }
  auto store = OpenStore();
  if (!store.ok()) return store.status();
  auto catalog = (*store)->LoadCatalog(name);
  if (absl::IsNotFound(catalog.status())) return nullptr;
  if (!catalog.ok()) return catalog.status();
  auto view = std::make_shared<JobView>();
  view->catalog = std::move(*catalog);
  if (auto seen = Seen(view->job().id)) {
    view->seen_spans = seen->first;
    view->seen_written_ns = seen->second;
  }
  const JobCatalog& c = view->catalog;
  for (size_t i = 0; i < c.tracks.size(); ++i)
    view->track_at[c.tracks[i].id] = i;
  for (size_t i = 0; i < c.processes.size(); ++i) {
    view->process_at[c.processes[i].id] = i;
  }
  for (size_t i = 0; i < c.ops.size(); ++i) view->op_at[c.ops[i].id] = i;
  if (views_.size() >= kMaxViews && found == views_.end()) views_.clear();
  views_[name] = view;
  return view;
}

absl::StatusOr<const JobClocks*> SqlSession::Clocks(JobView* view) {
  if (view->clocks) return &*view->clocks;
  auto store = OpenStore();
  if (!store.ok()) return store.status();
  auto stored = (*store)->LoadClockSolution(view->job().id);
  if (!stored.ok()) return stored.status();
  auto clocks =
      JobClocks::Load(**store, view->catalog, nullptr, JobRead{}, &*stored);
  if (!clocks.ok()) return clocks.status();
  view->clocks.emplace(std::move(*clocks));
  return &*view->clocks;
}

absl::StatusOr<v1::StepsReply> SqlSession::Steps(const std::string& name) {
  auto view = View(name);
  if (!view.ok()) return view.status();
  if (*view == nullptr) return v1::StepsReply();
  if (!(*view)->steps) {
    auto steps = MakeSteps(**view);
    if (!steps.ok()) return steps.status();
    (*view)->steps = std::move(*steps);
  }
  return *(*view)->steps;
}

absl::StatusOr<v1::StepsReply> SqlSession::MakeSteps(const JobView& view) {
  auto store = OpenStore();
  if (!store.ok()) return store.status();
  auto made = StepSummaries::Update(**store, view.catalog, kStepBudgetBytes);
  if (absl::IsNotFound(made.status())) return v1::StepsReply();
  if (!made.ok()) return made.status();
  return StepSummaries::Steps(**store, view.catalog, *made, std::nullopt,
                              false);
}

}  // namespace meridian
