#include "store/clickhouse_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "store/chunk_merge.h"
#include "store/chunk_rows.h"
#include "store/clickhouse_store_parts.h"
#include "store/row_binary.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

// Tables whose rows belong to one job, reclaimed when it is deleted.
constexpr const char* kJobTables[] = {
    "processes",      "tracks",          "chunks",         "op_totals",
    "process_totals", "clock_solutions", "summary_states", "step_summaries"};

std::string Int64Array(const std::vector<int64_t>& values) {
  return absl::StrCat("CAST([", absl::StrJoin(values, ","),
                      "] AS Array(Int64))");
}

}  // namespace

ClickHouseStore::ClickHouseStore(std::unique_ptr<ClickHouseClient> client,
                                 std::string location, size_t max_cached_ids)
    : client_(std::move(client)),
      location_(std::move(location)),
      max_cached_ids_(max_cached_ids),
      caches_(std::make_unique<Caches>(max_cached_ids)),
      random_(std::random_device()()) {}

ClickHouseStore::~ClickHouseStore() = default;

int64_t ClickHouseStore::Now() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  // Strictly increasing for this writer, whatever the clock does.
  last_now_ =
      std::max<int64_t>(last_now_ + 1, ts.tv_sec * 1000000000LL + ts.tv_nsec);
  return last_now_;
}

size_t ClickHouseStore::cached_ids() const {
  return caches_->strings.size() + caches_->ops.size() +
         caches_->clock_models.size();
}

absl::Status ClickHouseStore::BeginSnapshot() {
  snapshot_ns_ = Now();
  deletions_.reset();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
ClickHouseStore::Deletions() {
  // Within a snapshot they are fixed: read once, not at every filter.
  if (deletions_) return *deletions_;
  std::vector<std::pair<int64_t, int64_t>> deleted;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT job, max(deleted_ns) FROM deleted_jobs WHERE "
                   "deleted_ns <= ",
                   snapshot_ns_, " GROUP BY job"),
      [&](RowBinaryReader& r) {
        int64_t job, at;
        if (!r.Int64(&job) || !r.Int64(&at)) return false;
        deleted.emplace_back(job, at);
        return true;
      });
  if (!read.ok()) return read;
  if (snapshot_ns_ != std::numeric_limits<int64_t>::max()) deletions_ = deleted;
  return deleted;
}

absl::StatusOr<std::string> ClickHouseStore::JobRowFilter(int64_t job_id,
                                                          bool committed) {
  auto deleted = Deletions();
  if (!deleted.ok()) return deleted.status();
  int64_t after = 0;  // written_ns > 0 always
  for (const auto& [job, at] : *deleted) {
    if (job == job_id) after = at;
  }
  std::string filter = absl::StrCat("job = ", job_id, " AND written_ns > ",
                                    after, " AND written_ns <= ", snapshot_ns_);
  if (committed) absl::StrAppend(&filter, " AND ", Committed(job_id));
  return filter;
}

std::string ClickHouseStore::Committed(int64_t job_id,
                                       std::optional<int64_t> after) const {
  return absl::StrCat(
      "(agent, seq, attempt) GLOBAL IN (SELECT agent, seq, min(attempt) FROM "
      "batches WHERE job = ",
      job_id, " AND written_ns <= ", snapshot_ns_, " GROUP BY agent, seq",
      after ? absl::StrCat(" HAVING argMin(written_ns, attempt) > ", *after)
            : std::string(),
      ")");
}

absl::StatusOr<std::vector<JobInfo>> ClickHouseStore::Jobs(
    std::optional<int64_t> only) {
  auto deleted = Deletions();
  if (!deleted.ok()) return deleted.status();
  std::vector<int64_t> deleted_jobs, deleted_at;
  for (const auto& [job, at] : *deleted) {
    deleted_jobs.push_back(job);
    deleted_at.push_back(at);
  }
  std::string alive = absl::StrCat("written_ns <= ", snapshot_ns_);
  if (!deleted_jobs.empty()) {
    absl::StrAppend(&alive, " AND written_ns > transform(job, ",
                    Int64Array(deleted_jobs), ", ", Int64Array(deleted_at),
                    ", toInt64(0))");
  }
  if (only) absl::StrAppend(&alive, " AND job = ", *only);
  const std::string committed = absl::StrCat(
      " AND (agent, seq, attempt) GLOBAL IN (SELECT agent, seq, min(attempt) "
      "FROM batches WHERE written_ns <= ",
      snapshot_ns_, only ? absl::StrCat(" AND job = ", *only) : "",
      " GROUP BY agent, seq)");

  std::map<int64_t, JobInfo> jobs;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT job, any(job_name), max(written_ns) FROM batches "
                   "WHERE job != 0 AND ",
                   alive, committed, " GROUP BY job"),
      [&](RowBinaryReader& r) {
        JobInfo job;
        absl::string_view name;
        if (!r.Int64(&job.id) || !r.String(&name) ||
            !r.Int64(&job.written_ns)) {
          return false;
        }
        job.name = std::string(name);
        job.min_start_ns = std::numeric_limits<int64_t>::max();
        job.max_end_ns = std::numeric_limits<int64_t>::min();
        jobs[job.id] = std::move(job);
        return true;
      });
  if (!read.ok()) return read;
  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT job, min(first_start), max(max_end), max(max_dur), "
                   "max(max_end - first_start), sum(count), toInt64(count()), "
                   "sum(bytes) FROM chunks WHERE ",
                   alive, committed, " GROUP BY job"),
      [&](RowBinaryReader& r) {
        int64_t id;
        JobInfo scratch;
        if (!r.Int64(&id)) return false;
        auto it = jobs.find(id);
        JobInfo& job = it == jobs.end() ? scratch : it->second;
        if (!r.Int64(&job.min_start_ns) || !r.Int64(&job.max_end_ns) ||
            !r.Int64(&job.max_dur_ns) || !r.Int64(&job.max_chunk_ns) ||
            !r.Int64(&job.spans) || !r.Int64(&job.chunks) ||
            !r.Int64(&job.bytes)) {
          return false;
        }
        return true;
      });
  if (!read.ok()) return read;
  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT job, toInt64(uniqExactIf(r, r >= 0)), "
                   "toInt64(uniqExact(n)), max(ws), toInt64(sum(d)) FROM "
                   "(SELECT job, id, any(rank) AS r, any(node) AS n, "
                   "max(world_size) AS ws, max(dropped) AS d FROM processes "
                   "WHERE ",
                   alive, " GROUP BY job, id) GROUP BY job"),
      [&](RowBinaryReader& r) {
        int64_t id, ranks, nodes, dropped;
        int32_t world_size;
        if (!r.Int64(&id) || !r.Int64(&ranks) || !r.Int64(&nodes) ||
            !r.Int32(&world_size) || !r.Int64(&dropped)) {
          return false;
        }
        auto it = jobs.find(id);
        if (it != jobs.end()) {
          it->second.ranks = static_cast<int32_t>(ranks);
          it->second.nodes = static_cast<int32_t>(nodes);
          it->second.world_size = world_size;
          it->second.spans_dropped = dropped;
        }
        return true;
      });
  if (!read.ok()) return read;
  std::vector<JobInfo> out;
  for (auto& [id, job] : jobs) {
    // Times are stored absolute: the epoch is the first span's start.
    job.epoch_ns = job.spans > 0 ? job.min_start_ns : 0;
    out.push_back(std::move(job));
  }
  std::sort(out.begin(), out.end(),
            [](const JobInfo& a, const JobInfo& b) { return a.name < b.name; });
  return out;
}

absl::StatusOr<std::vector<JobInfo>> ClickHouseStore::ListJobs() {
  return Jobs(std::nullopt);
}

absl::StatusOr<int64_t> ClickHouseStore::DeleteJob(const std::string& name) {
  const int64_t id = JobId(name);
  auto jobs = Jobs(id);
  if (!jobs.ok()) return jobs.status();
  if (jobs->empty()) {
    return absl::NotFoundError(
        absl::StrCat("no job \"", name, "\" in ", named_));
  }
  const int64_t now = Now();
  deletions_.reset();
  RowBinaryWriter tombstone;
  tombstone.Int64(id);
  tombstone.Int64(now);
  absl::Status status =
      client_->InsertRowBinary("deleted_jobs", tombstone.bytes());
  if (!status.ok()) return status;
  // Reads skip the rows from now on; the server reclaims them in the
  // background (a mutation). A failure here loses nothing but disk space.
  for (const char* table : kJobTables) {
    client_
        ->Execute(absl::StrCat("ALTER TABLE ", table, " DELETE WHERE job = ",
                               id, " AND written_ns <= ", now))
        .IgnoreError();
  }
  return (*jobs)[0].spans;
}

absl::StatusOr<std::vector<std::string>> ClickHouseStore::DeleteJobsEndedBefore(
    int64_t end_before_ns) {
  auto jobs = ListJobs();
  if (!jobs.ok()) return jobs.status();
  std::vector<std::string> deleted;
  for (const JobInfo& job : *jobs) {
    const bool old = job.spans > 0 ? job.max_end_ns < end_before_ns
                                   : job.written_ns < end_before_ns;
    if (!old) continue;
    auto spans = DeleteJob(job.name);
    if (!spans.ok()) return spans.status();
    deleted.push_back(job.name);
  }
  return deleted;
}

absl::Status ClickHouseStore::LookupStrings(
    const std::string& ids_subquery,
    std::vector<std::pair<int64_t, std::string>>* out) {
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT id, any(s) FROM strings WHERE id GLOBAL IN (",
                   ids_subquery, ") GROUP BY id"),
      [&](RowBinaryReader& r) {
        int64_t id;
        absl::string_view s;
        if (!r.Int64(&id) || !r.String(&s)) return false;
        out->emplace_back(id, std::string(s));
        return true;
      });
  return read;
}

absl::StatusOr<JobCatalog> ClickHouseStore::LoadCatalog(
    const std::string& job_name) {
  const int64_t job_id = JobId(job_name);
  auto jobs = Jobs(job_id);
  if (!jobs.ok()) return jobs.status();
  if (jobs->empty()) {
    // The message names no other job: the asker may not be allowed to know
    // of them (docs/security.md).
    return absl::NotFoundError(
        absl::StrCat("no job \"", job_name, "\" in ", named_,
                     " (`meridian jobs` lists the stored jobs)"));
  }
  JobCatalog catalog;
  catalog.job = std::move((*jobs)[0]);
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();

  std::vector<std::pair<int64_t, std::string>> names;
  absl::Status looked =
      LookupStrings(absl::StrCat("SELECT node FROM processes WHERE ", *filter,
                                 " UNION ALL SELECT name FROM tracks WHERE ",
                                 *filter, " UNION ALL SELECT name FROM ops"),
                    &names);
  if (!looked.ok()) return looked;
  absl::flat_hash_map<int64_t, std::string> text(names.begin(), names.end());
  const auto name_of = [&](int64_t id) {
    auto it = text.find(id);
    return it == text.end() ? std::string() : it->second;
  };

  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat(
          "SELECT id, any(node), any(rank), any(local_rank), any(pid), "
          "max(dropped) FROM processes WHERE ",
          *filter, " GROUP BY id"),
      [&](RowBinaryReader& r) {
        ProcessInfo p;
        int64_t node;
        if (!r.Int64(&p.id) || !r.Int64(&node) || !r.Int32(&p.rank) ||
            !r.Int32(&p.local_rank) || !r.Int64(&p.pid) ||
            !r.Int64(&p.dropped)) {
          return false;
        }
        p.node = name_of(node);
        catalog.processes.push_back(std::move(p));
        return true;
      });
  if (!read.ok()) return read;
  std::sort(catalog.processes.begin(), catalog.processes.end(),
            [](const ProcessInfo& a, const ProcessInfo& b) {
              return std::tie(a.rank, a.id) < std::tie(b.rank, b.id);
            });

  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT id, any(process), any(kind), any(ext_id), "
                   "argMin(name, written_ns) FROM tracks WHERE ",
                   *filter, " GROUP BY id"),
      [&](RowBinaryReader& r) {
        TrackInfo t;
        int32_t kind;
        int64_t name;
        if (!r.Int64(&t.id) || !r.Int64(&t.process_id) || !r.Int32(&kind) ||
            !r.Int64(&t.ext_id) || !r.Int64(&name)) {
          return false;
        }
        t.kind = static_cast<v1::TrackKind>(kind);
        t.name = name_of(name);
        catalog.tracks.push_back(std::move(t));
        return true;
      });
  if (!read.ok()) return read;
  std::sort(catalog.tracks.begin(), catalog.tracks.end(),
            [](const TrackInfo& a, const TrackInfo& b) {
              return std::make_tuple(a.process_id, static_cast<int>(a.kind),
                                     a.ext_id) <
                     std::make_tuple(b.process_id, static_cast<int>(b.kind),
                                     b.ext_id);
            });

  read = ReadRows(
      client_.get(),
      "SELECT id, any(category), any(name) FROM ops GROUP BY id "
      "ORDER BY id",
      [&](RowBinaryReader& r) {
        OpInfo op;
        int32_t category;
        int64_t name;
        if (!r.Int64(&op.id) || !r.Int32(&category) || !r.Int64(&name)) {
          return false;
        }
        op.category = static_cast<v1::Category>(category);
        op.name = name_of(name);
        catalog.ops.push_back(std::move(op));
        return true;
      });
  if (!read.ok()) return read;
  return catalog;
}

absl::Status ClickHouseStore::Scan(
    const JobInfo& job, const ScanRange& range,
    const std::function<bool(const StoredSpan&)>& visit, ScanStats* stats) {
  // The range is relative to the job's first span; stored times absolute.
  // A span ending at or after `from` is in a chunk starting no earlier than
  // from - max_chunk.
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  int64_t end_lo = std::numeric_limits<int64_t>::min();
  if (range.from_ns) {
    end_lo = job.min_start_ns + *range.from_ns;
    lo = end_lo - job.max_chunk_ns;
  }
  if (range.to_ns) hi = job.min_start_ns + *range.to_ns;
  // The chunk's own columns first (PREWHERE: the data column is read only
  // for the rows they pass), then whether its write was committed.
  auto filter = JobRowFilter(job.id, false);
  if (!filter.ok()) return filter.status();
  std::string prewhere = *filter;
  if (range.from_ns) {
    absl::StrAppend(&prewhere, " AND first_start >= ", lo,
                    " AND max_end >= ", end_lo);
  }
  if (range.to_ns) absl::StrAppend(&prewhere, " AND first_start < ", hi);
  if (range.first_step || range.last_step) {
    absl::StrAppend(&prewhere, " AND has_step = 1");
    if (range.first_step) {
      absl::StrAppend(&prewhere, " AND max_step >= ", *range.first_step);
    }
    if (range.last_step) {
      absl::StrAppend(&prewhere, " AND min_step <= ", *range.last_step);
    }
  }
  if (range.tracks) {
    std::vector<int64_t> tracks(range.tracks->begin(), range.tracks->end());
    std::sort(tracks.begin(), tracks.end());
    if (tracks.empty()) return absl::OkStatus();
    absl::StrAppend(&prewhere, " AND track IN (", absl::StrJoin(tracks, ","),
                    ")");
  }
  std::string sql = absl::StrCat(
      "SELECT written_ns AS id, track, first_start, op_ids, strings, data "
      "FROM chunks PREWHERE ",
      prewhere, " WHERE ", Committed(job.id, range.written_after));
  absl::StrAppend(&sql, " ORDER BY first_start, id FORMAT RowBinary");
  auto rows = client_->Stream(sql);
  if (!rows.ok()) return rows.status();
  ClickHouseRows* stream = rows->get();
  ChunkRowSource source({[stream](size_t n) { return stream->Fill(n); },
                         [stream](size_t n) { stream->Consume(n); },
                         [stream] { return stream->ended(); }});
  return MergeChunks(&source, range, end_lo, hi, visit, stats);
}

absl::StatusOr<std::vector<NodeClockModel>> ClickHouseStore::LoadClockModels(
    const std::string& node, int64_t job_id) {
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  // The agents that delivered the job's batches; a job without any (only
  // the SQLite store has such, from before version 4) uses every model.
  int64_t agents = 0;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT toInt64(uniqExact(agent)) FROM batches WHERE ",
                   *filter),
      [&](RowBinaryReader& r) { return r.Int64(&agents); });
  if (!read.ok()) return read;
  std::vector<NodeClockModel> models;
  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT reference_ns, any(offset_ns), any(drift_ppb), "
                   "any(uncertainty_ns) FROM clock_models WHERE node = ",
                   Quote(node),
                   agents == 0 ? std::string()
                               : absl::StrCat(" AND agent GLOBAL IN (SELECT "
                                              "agent FROM batches WHERE ",
                                              *filter, ")"),
                   " GROUP BY agent, reference_ns ORDER BY reference_ns, "
                   "agent"),
      [&](RowBinaryReader& r) {
        NodeClockModel m;
        if (!r.Int64(&m.reference_ns) || !r.Int64(&m.offset_ns) ||
            !r.Int64(&m.drift_ppb) || !r.Int64(&m.uncertainty_ns)) {
          return false;
        }
        models.push_back(m);
        return true;
      });
  if (!read.ok()) return read;
  return models;
}

absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>>
ClickHouseStore::StepRange(int64_t job_id) {
  auto filter = JobRowFilter(job_id, true);
  if (!filter.ok()) return filter.status();
  std::optional<std::pair<int64_t, int64_t>> range;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT min(min_step), max(max_step), toInt64(count()) "
                   "FROM chunks WHERE has_step = 1 AND ",
                   *filter),
      [&](RowBinaryReader& r) {
        int64_t lo, hi, count;
        if (!r.Int64(&lo) || !r.Int64(&hi) || !r.Int64(&count)) return false;
        if (count > 0) range = std::make_pair(lo, hi);
        return true;
      });
  if (!read.ok()) return read;
  return range;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
ClickHouseStore::TrackLastSteps(int64_t job_id) {
  auto filter = JobRowFilter(job_id, true);
  if (!filter.ok()) return filter.status();
  std::vector<std::pair<int64_t, int64_t>> tracks;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT track, max(max_step) FROM chunks WHERE has_step = "
                   "1 AND ",
                   *filter, " GROUP BY track ORDER BY track"),
      [&](RowBinaryReader& r) {
        int64_t track, last;
        if (!r.Int64(&track) || !r.Int64(&last)) return false;
        tracks.emplace_back(track, last);
        return true;
      });
  if (!read.ok()) return read;
  return tracks;
}

absl::StatusOr<int64_t> ClickHouseStore::WriteMark(int64_t job_id) {
  // The latest commit less the margin: a commit's time is taken before its
  // row is inserted, so a write stamped just before the latest (by another
  // collector, or a clock slightly behind) can become visible after it.
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  int64_t mark = 0;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT toInt64(max(written_ns)) FROM batches WHERE ",
                   *filter),
      [&](RowBinaryReader& r) { return r.Int64(&mark); });
  if (!read.ok()) return read;
  return mark > 0 ? mark - write_mark_margin_ns_ : 0;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
ClickHouseStore::StepsWrittenAfter(int64_t job_id, int64_t mark,
                                   int64_t up_to) {
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  // Chunks of the committed attempts whose commit came after `mark`.
  const std::string late = Committed(job_id, mark);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT DISTINCT min_step, max_step FROM chunks WHERE "
                   "has_step = 1 AND min_step <= ",
                   up_to, " AND ", *filter, " AND ", late,
                   " ORDER BY min_step, max_step"),
      [&](RowBinaryReader& r) {
        int64_t lo, hi;
        if (!r.Int64(&lo) || !r.Int64(&hi)) return false;
        ranges.emplace_back(lo, hi);
        return true;
      });
  if (!read.ok()) return read;
  return ranges;
}

absl::StatusOr<JobTotals> ClickHouseStore::LoadTotals(int64_t job_id) {
  auto filter = JobRowFilter(job_id, true);
  if (!filter.ok()) return filter.status();
  JobTotals totals;
  // Later rows of a process (and operation) replace earlier ones.
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT process, op, calls, bytes, dur_ns, size_log2, "
                   "size_calls, size_bytes, size_dur_ns FROM op_totals WHERE ",
                   *filter, " ORDER BY process, op, written_ns, seq"),
      [&](RowBinaryReader& r) {
        StoredOpTotals op;
        if (!r.Int64(&op.process_id) || !r.Int64(&op.op_id) ||
            !r.Int64(&op.calls) || !r.Int64(&op.bytes) ||
            !r.Int64(&op.dur_ns)) {
          return false;
        }
        uint64_t n[4];
        std::vector<StoredOpTotals::Size> sizes;
        for (int column = 0; column < 4; ++column) {
          if (!r.ArraySize(&n[column]) || (column > 0 && n[column] != n[0])) {
            return false;
          }
          sizes.resize(n[0]);
          for (uint64_t i = 0; i < n[column]; ++i) {
            StoredOpTotals::Size& s = sizes[i];
            const bool ok = column == 0   ? r.Int32(&s.log2)
                            : column == 1 ? r.Int64(&s.calls)
                            : column == 2 ? r.Int64(&s.bytes)
                                          : r.Int64(&s.dur_ns);
            if (!ok) return false;
          }
        }
        std::sort(sizes.begin(), sizes.end(),
                  [](const auto& a, const auto& b) { return a.log2 < b.log2; });
        op.sizes = std::move(sizes);
        if (!totals.ops.empty() &&
            totals.ops.back().process_id == op.process_id &&
            totals.ops.back().op_id == op.op_id) {
          totals.ops.back() = std::move(op);
        } else {
          totals.ops.push_back(std::move(op));
        }
        return true;
      });
  if (!read.ok()) return read;
  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT process, comm_ns, elapsed_ns, source, present, "
                   "user_ns, system_ns, max_rss_bytes, context_switches FROM "
                   "process_totals WHERE ",
                   *filter, " ORDER BY process, written_ns, seq"),
      [&](RowBinaryReader& r) {
        StoredProcessTotals p;
        absl::string_view source;
        uint8_t present;
        int64_t values[4];
        if (!r.Int64(&p.process_id) || !r.Int64(&p.comm_ns) ||
            !r.Int64(&p.elapsed_ns) || !r.String(&source) ||
            !r.UInt8(&present)) {
          return false;
        }
        for (int64_t& v : values) {
          if (!r.Int64(&v)) return false;
        }
        p.source = std::string(source);
        std::optional<int64_t>* fields[] = {
            &p.user_ns, &p.system_ns, &p.max_rss_bytes, &p.context_switches};
        for (int i = 0; i < 4; ++i) {
          if (present & (1 << i)) *fields[i] = values[i];
        }
        if (!totals.processes.empty() &&
            totals.processes.back().process_id == p.process_id) {
          totals.processes.back() = std::move(p);
        } else {
          totals.processes.push_back(std::move(p));
        }
        return true;
      });
  if (!read.ok()) return read;
  return totals;
}

absl::StatusOr<int64_t> ClickHouseStore::FileBytes() {
  int64_t bytes = 0;
  absl::Status read = ReadRows(
      client_.get(),
      "SELECT toInt64(sum(bytes_on_disk)) FROM system.parts WHERE database = "
      "currentDatabase() AND active",
      [&](RowBinaryReader& r) { return r.Int64(&bytes); });
  if (!read.ok()) return read;
  return bytes;
}

// The latest row of `table` (clock_solutions or summary_states) written
// after the job's last deletion and up to the snapshot.
absl::StatusOr<std::optional<StoredJobResult>> ClickHouseStore::LoadResult(
    const char* table, const char* time_column, int64_t job_id) {
  std::optional<StoredJobResult> result;
  if (!HasTable(table)) return result;
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  absl::Status read =
      ReadRows(client_.get(),
               absl::StrCat("SELECT spans, job_written_ns, models, ",
                            time_column, ", data FROM ", table, " WHERE ",
                            *filter, " ORDER BY written_ns DESC LIMIT 1"),
               [&](RowBinaryReader& r) {
                 StoredJobResult s;
                 absl::string_view data;
                 if (!r.Int64(&s.spans) || !r.Int64(&s.written_ns) ||
                     !r.Int64(&s.models) || !r.Int64(&s.computed_ns) ||
                     !r.String(&data)) {
                   return false;
                 }
                 s.data = std::string(data);
                 result = std::move(s);
                 return true;
               });
  if (!read.ok()) return read;
  return result;
}

absl::Status ClickHouseStore::SaveResult(const char* table, int64_t job_id,
                                         const StoredJobResult& result) {
  if (read_only_) {
    return absl::FailedPreconditionError(
        absl::StrCat(named_, " is open read-only"));
  }
  RowBinaryWriter row;
  row.Int64(job_id);
  row.Int64(result.spans);
  row.Int64(result.written_ns);
  row.Int64(result.models);
  row.Int64(result.computed_ns);
  row.Int64(Now());
  row.String(result.data);
  return client_->InsertRowBinary(table, row.bytes());
}

absl::StatusOr<std::optional<StoredJobResult>>
ClickHouseStore::LoadClockSolution(int64_t job_id) {
  return LoadResult("clock_solutions", "solved_ns", job_id);
}

absl::Status ClickHouseStore::SaveClockSolution(
    int64_t job_id, const StoredJobResult& solution) {
  return SaveResult("clock_solutions", job_id, solution);
}

absl::StatusOr<std::optional<StoredJobResult>>
ClickHouseStore::LoadSummaryState(int64_t job_id) {
  return LoadResult("summary_states", "computed_ns", job_id);
}

// The summaries first, then the state that names them, in a later
// written_ns: a reader whose snapshot holds the state holds the summaries.
absl::Status ClickHouseStore::SaveStepSummaries(
    int64_t job_id, const std::vector<StoredStepSummary>& steps,
    const StoredJobResult& state) {
  if (read_only_) {
    return absl::FailedPreconditionError(
        absl::StrCat(named_, " is open read-only"));
  }
  if (!steps.empty()) {
    const int64_t now = Now();
    RowBinaryWriter rows;
    for (const StoredStepSummary& step : steps) {
      rows.Int64(job_id);
      rows.Int64(step.step);
      rows.Int64(now);
      rows.String(step.data);
    }
    absl::Status inserted =
        client_->InsertRowBinary("step_summaries", rows.bytes());
    if (!inserted.ok()) return inserted;
  }
  return SaveResult("summary_states", job_id, state);
}

// Read a page of steps at a time (the latest row of each), so memory holds
// one page however many steps the job has.
absl::Status ClickHouseStore::ScanStepSummaries(
    int64_t job_id, int64_t first_step,
    const std::function<bool(const StoredStepSummary&)>& visit) {
  if (!HasTable("step_summaries")) return absl::OkStatus();
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  constexpr int kPage = 4096;
  int64_t from = first_step;
  for (;;) {
    int rows = 0;
    bool more = true;
    StoredStepSummary row;
    absl::Status read = ReadRows(
        client_.get(),
        absl::StrCat("SELECT step, data FROM step_summaries WHERE ", *filter,
                     " AND step >= ", from,
                     " ORDER BY step, written_ns DESC LIMIT 1 BY step LIMIT ",
                     kPage),
        [&](RowBinaryReader& r) {
          absl::string_view data;
          if (!r.Int64(&row.step) || !r.String(&data)) return false;
          ++rows;
          if (!more) return true;
          row.data.assign(data.data(), data.size());
          more = visit(row);
          return true;
        });
    if (!read.ok()) return read;
    if (!more || rows < kPage) return absl::OkStatus();
    from = row.step + 1;
  }
}

}  // namespace meridian
