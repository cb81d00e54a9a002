#include "query/sql/span_table.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/json.h"
#include "query/ops/category.h"
#include "query/sql/span_constraints.h"
#include "query/sql/vtab_module.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

constexpr const char* kDeclaration =
    "CREATE TABLE x(job TEXT, rank INTEGER, node TEXT, pid INTEGER, "
    "tid INTEGER, track TEXT, category TEXT, name TEXT, start_ns INTEGER, "
    "dur_ns INTEGER, end_ns INTEGER, bytes INTEGER, peer INTEGER, "
    "tag INTEGER, comm INTEGER, seq INTEGER, step INTEGER, args TEXT, "
    "raw_start_ns INTEGER, kind TEXT, value REAL)";

// Rows a scan of the whole table is taken to give (the planner's costs are
// relative: constraints divide it).
constexpr double kWholeTableRows = 1e9;

struct SpanTable {
  sqlite3_vtab base;  // first: SQLite sees a sqlite3_vtab*
  SqlSession* session;
};

struct SpanCursor {
  sqlite3_vtab_cursor base;  // first
  SpanTable* table;
  SpanConstraints where;
  std::vector<std::string> jobs;
  size_t next_job = 0;
  bool eof = false;
  int64_t chunk_id = 0;  // the stored chunk being read (rowids)

  // The job being read, and what of it the constraints leave.
  std::shared_ptr<JobView> view;  // kept alive while read
  const JobClocks* clocks = nullptr;
  bool all_tracks = true;
  absl::flat_hash_set<int64_t> tracks;
  bool all_ops = true;
  absl::flat_hash_set<int64_t> ops;
  sqlite3_stmt* chunks = nullptr;

  // The chunk being read and the span of it the cursor is on.
  SpanColumns spans;
  const TrackInfo* track = nullptr;
  const ProcessInfo* process = nullptr;
  size_t at = 0;
  bool placed = false;
  JobClocks::Interval shown{0, 0};
};

int Fail(sqlite3_vtab* vtab, const absl::Status& status) {
  return FailTable(vtab, reinterpret_cast<SpanTable*>(vtab)->session, status);
}
int Fail(sqlite3_vtab* vtab, absl::string_view message) {
  return Fail(vtab, absl::DataLossError(message));
}

StoredSpan ToStored(const SpanColumns& spans, size_t i, int64_t track) {
  StoredSpan span;
  span.start_ns = spans.start_ns[i];
  span.dur_ns = spans.dur_ns[i];
  span.track_id = track;
  span.op_id = spans.name[i];
  return span;
}

// --- The table ---

int Connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out,
            char** error) {
  // The tables' own statement, whatever authorizer the connection has.
  SqlSession::Internal internal(static_cast<SqlSession*>(aux));
  int rc = sqlite3_declare_vtab(db, kDeclaration);
  if (rc != SQLITE_OK) return rc;
  auto* table = new SpanTable();
  table->session = static_cast<SqlSession*>(aux);
  *out = &table->base;
  (void)error;
  return SQLITE_OK;
}

int Disconnect(sqlite3_vtab* vtab) {
  delete reinterpret_cast<SpanTable*>(vtab);
  return SQLITE_OK;
}

SpanOp ToOp(unsigned char op) {
  switch (op) {
    case SQLITE_INDEX_CONSTRAINT_GT:
      return SpanOp::kGt;
    case SQLITE_INDEX_CONSTRAINT_GE:
      return SpanOp::kGe;
    case SQLITE_INDEX_CONSTRAINT_LT:
      return SpanOp::kLt;
    case SQLITE_INDEX_CONSTRAINT_LE:
      return SpanOp::kLe;
    default:
      return SpanOp::kEq;
  }
}

bool Handled(unsigned char op) {
  return op == SQLITE_INDEX_CONSTRAINT_EQ || op == SQLITE_INDEX_CONSTRAINT_GT ||
         op == SQLITE_INDEX_CONSTRAINT_GE || op == SQLITE_INDEX_CONSTRAINT_LT ||
         op == SQLITE_INDEX_CONSTRAINT_LE;
}

// Hands down every usable constraint (plan: span_constraints.h); none is
// omitted from SQLite's own check.
int BestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
  std::string plan;
  double rows = kWholeTableRows;
  int argv = 0;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (!c.usable || !Handled(c.op)) continue;
    const SpanOp op = ToOp(c.op);
    if (!SpanConstraints::Usable(c.iColumn, op)) continue;
    // `name = 'x' COLLATE NOCASE` matches what a byte-for-byte comparison
    // would not: left to SQLite.
    const char* collation = sqlite3_vtab_collation(info, i);
    if (collation != nullptr && strcmp(collation, "BINARY") != 0) continue;
    info->aConstraintUsage[i].argvIndex = ++argv;
    info->aConstraintUsage[i].omit = 0;
    plan.push_back(static_cast<char>('a' + c.iColumn));
    plan.push_back(static_cast<char>(op));
    rows /= SpanConstraints::Selectivity(c.iColumn, op);
  }
  rows = std::max(rows, 1.0);
  info->estimatedRows = static_cast<sqlite3_int64>(rows);
  info->estimatedCost = rows;
  info->idxStr = sqlite3_mprintf("%s", plan.c_str());
  info->needToFreeIdxStr = 1;
  return SQLITE_OK;
}

int Open(sqlite3_vtab* vtab, sqlite3_vtab_cursor** out) {
  auto* cursor = new SpanCursor();
  cursor->table = reinterpret_cast<SpanTable*>(vtab);
  *out = &cursor->base;
  return SQLITE_OK;
}

void FinishChunks(SpanCursor* c) {
  sqlite3_finalize(c->chunks);
  c->chunks = nullptr;
}

int Close(sqlite3_vtab_cursor* cur) {
  auto* c = reinterpret_cast<SpanCursor*>(cur);
  FinishChunks(c);
  delete c;
  return SQLITE_OK;
}

// --- A job's scan ---

// The tracks and operations of the job that the constraints leave.
void Select(SpanCursor* c) {
  const JobCatalog& catalog = c->view->catalog;
  const SpanConstraints& w = c->where;
  c->all_tracks = w.rank.whole() && !w.pid && !w.track;
  c->tracks.clear();
  if (!c->all_tracks) {
    for (const TrackInfo& t : catalog.tracks) {
      auto at = c->view->process_at.find(t.process_id);
      if (at == c->view->process_at.end()) continue;
      const ProcessInfo& p = catalog.processes[at->second];
      // An unknown rank reads as NULL, which no comparison meets.
      if (!w.rank.whole() && (p.rank < 0 || !w.rank.Contains(p.rank))) {
        continue;
      }
      if (w.pid && p.pid != *w.pid) continue;
      if (w.track && t.name != *w.track) continue;
      c->tracks.insert(t.id);
    }
  }
  c->all_ops = !w.name;
  c->ops.clear();
  if (!c->all_ops) {
    for (const OpInfo& op : catalog.ops) {
      if (op.name == *w.name) c->ops.insert(op.id);
    }
  }
}

// The raw start times a span that meets the constraints can have: the
// raw range, and the corrected range taken to each track's raw clock.
// A corrected bound this far out (past the year 2116) bounds nothing: the
// clock arithmetic near the int64 limits would overflow.
constexpr int64_t kFar = int64_t{1} << 62;

IntRange RawStarts(SpanCursor* c) {
  IntRange raw = c->where.raw_start;
  const IntRange& shown = c->where.start;
  if (shown.whole() || c->clocks == nullptr) return raw;
  const bool below = shown.lo > -kFar, above = shown.hi < kFar;
  int64_t lo = kMax, hi = kMin;
  for (const TrackInfo& t : c->view->catalog.tracks) {
    if (!c->all_tracks && !c->tracks.contains(t.id)) continue;
    lo = std::min(lo,
                  below ? c->clocks->FirstRawAtOrAfter(t.id, shown.lo) : kMin);
    hi = std::max(hi, above
                          ? c->clocks->FirstRawAtOrAfter(t.id, shown.hi + 1) - 1
                          : kMax);
  }
  raw.lo = std::max(raw.lo, lo);
  raw.hi = std::min(raw.hi, hi);
  return raw;
}

// a - b, held at the int64 limits (b >= 0: an epoch, a chunk's length).
int64_t Minus(int64_t a, int64_t b) {
  if (a == kMax) return kMax;
  return a < kMin + b ? kMin : a - b;
}

// Prepares the scan of the job's chunks that can hold a span that meets
// the constraints: of its time range and step range (tracks are checked
// before a chunk is decoded). Stored times are relative to the job's epoch;
// a span starting at or after `lo` ends at or after it, in a chunk starting
// no earlier than lo - the job's longest chunk.
int PrepareChunks(SpanCursor* c) {
  const JobInfo& job = c->view->job();
  const IntRange raw = RawStarts(c);
  if (raw.empty()) return SQLITE_OK;
  const int64_t end_lo = Minus(raw.lo, job.epoch_ns);
  const int64_t first_lo = Minus(end_lo, job.max_chunk_ns);
  const int64_t first_hi = Minus(raw.hi, job.epoch_ns);
  const char* sql =
      "SELECT id, track, data FROM main.chunks WHERE job=?1 AND "
      "first_start>=?2 AND first_start<=?3 AND max_end>=?4 AND (?5=0 OR "
      "(min_step IS NOT NULL AND max_step>=?6 AND min_step<=?7)) "
      "ORDER BY first_start, id";
  int rc = c->table->session->PrepareInternal(sql, &c->chunks);
  if (rc != SQLITE_OK) return rc;
  const IntRange& step = c->where.step;
  sqlite3_bind_int64(c->chunks, 1, job.id);
  sqlite3_bind_int64(c->chunks, 2, first_lo);
  sqlite3_bind_int64(c->chunks, 3, first_hi);
  sqlite3_bind_int64(c->chunks, 4, end_lo);
  sqlite3_bind_int(c->chunks, 5, step.whole() ? 0 : 1);
  sqlite3_bind_int64(c->chunks, 6, step.lo);
  sqlite3_bind_int64(c->chunks, 7, step.hi);
  c->table->session->last_scan().chunks += job.chunks;
  return SQLITE_OK;
}

// Starts the scan of job `name`; leaves `chunks` unset if nothing of it
// can meet the constraints.
int StartJob(SpanCursor* c, const std::string& name) {
  SqlSession* session = c->table->session;
  auto view = session->View(name);
  if (!view.ok()) return Fail(&c->table->base, view.status());
  c->view = std::move(*view);
  c->clocks = nullptr;
  if (c->view == nullptr) return SQLITE_OK;  // deleted since it was listed
  Select(c);
  if (!c->all_tracks && c->tracks.empty()) return SQLITE_OK;
  if (!c->all_ops && c->ops.empty()) return SQLITE_OK;
  if (!c->where.start.whole()) {
    auto clocks = session->Clocks(c->view.get());
    if (!clocks.ok()) return Fail(&c->table->base, clocks.status());
    c->clocks = *clocks;
  }
  return PrepareChunks(c);
}

// Decodes the chunk the statement is on, if its track is wanted.
int TakeChunk(SpanCursor* c, bool* taken) {
  *taken = false;
  const int64_t track = sqlite3_column_int64(c->chunks, 1);
  if (!c->all_tracks && !c->tracks.contains(track)) return SQLITE_OK;
  const JobView& view = *c->view;
  auto found = view.track_at.find(track);
  auto process =
      found == view.track_at.end()
          ? view.process_at.end()
          : view.process_at.find(view.catalog.tracks[found->second].process_id);
  if (process == view.process_at.end()) {
    return Fail(&c->table->base,
                absl::StrCat("chunk ", sqlite3_column_int64(c->chunks, 0),
                             " names track ", track, ", which job ",
                             view.job().name, " does not list"));
  }
  c->track = &view.catalog.tracks[found->second];
  c->process = &view.catalog.processes[process->second];
  const void* blob = sqlite3_column_blob(c->chunks, 2);
  const int bytes = sqlite3_column_bytes(c->chunks, 2);
  absl::Status decoded = DecodeSpanChunk(
      absl::string_view(static_cast<const char*>(blob), bytes), &c->spans);
  if (!decoded.ok()) {
    return Fail(
        &c->table->base,
        absl::StrCat("chunk ", sqlite3_column_int64(c->chunks, 0), " of job ",
                     view.job().name, " does not decode: ", decoded.message()));
  }
  c->chunk_id = sqlite3_column_int64(c->chunks, 0);
  SpanScanCount& count = c->table->session->last_scan();
  ++count.chunks_read;
  count.spans_decoded += static_cast<int64_t>(c->spans.size());
  *taken = true;
  return SQLITE_OK;
}

// Whether span `i` of the chunk meets the constraints handed down (all but
// the corrected start, which Advance checks once the span is placed).
bool Meets(const SpanCursor& c, size_t i) {
  const SpanColumns& s = c.spans;
  const SpanConstraints& w = c.where;
  if (!c.all_ops && !c.ops.contains(s.name[i])) return false;
  if (!w.step.whole() &&
      (!(s.flags[i] & SpanColumns::kHasStep) || !w.step.Contains(s.step[i]))) {
    return false;
  }
  return w.raw_start.Contains(s.start_ns[i]);
}

int Place(SpanCursor* c) {
  if (c->placed) return SQLITE_OK;
  if (c->clocks == nullptr) {
    auto clocks = c->table->session->Clocks(c->view.get());
    if (!clocks.ok()) return Fail(&c->table->base, clocks.status());
    c->clocks = *clocks;
  }
  c->shown = c->clocks->Place(ToStored(c->spans, c->at, c->track->id));
  c->placed = true;
  return SQLITE_OK;
}

// Moves to the next span that meets the constraints, or to the end.
int Advance(SpanCursor* c) {
  while (true) {
    while (c->track != nullptr && ++c->at < c->spans.size()) {
      if (!Meets(*c, c->at)) continue;
      c->placed = false;
      if (!c->where.start.whole()) {
        if (int rc = Place(c); rc != SQLITE_OK) return rc;
        if (!c->where.start.Contains(c->shown.start_ns)) continue;
      }
      ++c->table->session->last_scan().rows;
      return SQLITE_OK;
    }
    c->track = nullptr;
    if (c->table->session->ShouldStop()) return InterruptTable(&c->table->base);
    if (c->chunks != nullptr) {
      const int rc = sqlite3_step(c->chunks);
      if (rc == SQLITE_ROW) {
        bool taken = false;
        if (int failed = TakeChunk(c, &taken); failed != SQLITE_OK) {
          return failed;
        }
        if (taken) c->at = static_cast<size_t>(-1);  // ++ makes it 0
        continue;
      }
      FinishChunks(c);
      if (rc != SQLITE_DONE) return rc;
    }
    if (c->next_job >= c->jobs.size()) {
      c->eof = true;
      return SQLITE_OK;
    }
    if (int rc = StartJob(c, c->jobs[c->next_job++]); rc != SQLITE_OK) {
      return rc;
    }
  }
}

std::optional<std::string> TextValue(sqlite3_value* v) {
  if (sqlite3_value_type(v) != SQLITE_TEXT) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(sqlite3_value_text(v)),
                     sqlite3_value_bytes(v));
}

std::optional<int64_t> IntegerValue(sqlite3_value* v) {
  if (sqlite3_value_type(v) != SQLITE_INTEGER) return std::nullopt;
  return sqlite3_value_int64(v);
}

int Filter(sqlite3_vtab_cursor* cur, int, const char* plan, int argc,
           sqlite3_value** argv) {
  auto* c = reinterpret_cast<SpanCursor*>(cur);
  FinishChunks(c);
  c->where = SpanConstraints();
  const size_t planned = plan == nullptr ? 0 : strlen(plan) / 2;
  for (size_t k = 0; k < planned && static_cast<int>(k) < argc; ++k) {
    c->where.Add(plan[2 * k] - 'a', static_cast<SpanOp>(plan[2 * k + 1]),
                 TextValue(argv[k]), IntegerValue(argv[k]));
  }
  c->eof = false;
  c->track = nullptr;
  c->view = nullptr;
  c->jobs.clear();
  c->next_job = 0;
  c->table->session->last_scan() = SpanScanCount();
  if (!c->where.none) {
    auto jobs = c->table->session->JobNames(c->where.job);
    if (!jobs.ok()) return Fail(&c->table->base, jobs.status());
    c->jobs = std::move(*jobs);
  }
  return Advance(c);
}

int Next(sqlite3_vtab_cursor* cur) {
  return Advance(reinterpret_cast<SpanCursor*>(cur));
}

int Eof(sqlite3_vtab_cursor* cur) {
  return reinterpret_cast<SpanCursor*>(cur)->eof ? 1 : 0;
}

// Unique and stable across scans (SQLite's OR plans drop repeats by rowid):
// the stored chunk's id and the span's place in it (< kMaxChunkSpans).
int Rowid(sqlite3_vtab_cursor* cur, sqlite3_int64* out) {
  auto* c = reinterpret_cast<SpanCursor*>(cur);
  *out = (c->chunk_id << 16) | static_cast<int64_t>(c->at);
  return SQLITE_OK;
}

// --- Values ---

void ResultText(sqlite3_context* ctx, absl::string_view s) {
  sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()),
                      SQLITE_TRANSIENT);
}

absl::string_view KindName(uint32_t kind) {
  switch (kind) {
    case v1::SPAN_KIND_INSTANT:
      return "instant";
    case v1::SPAN_KIND_COUNTER:
      return "counter";
    default:
      return "complete";
  }
}

// The string a stored string id names (the connection's strings table).
std::string LookupString(SqlSession* session, int64_t id) {
  std::string out;
  sqlite3_stmt* stmt = nullptr;
  if (session->PrepareInternal("SELECT s FROM main.strings WHERE id=?1",
                               &stmt) == SQLITE_OK) {
    sqlite3_bind_int64(stmt, 1, id);
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      out.assign(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)),
                 sqlite3_column_bytes(stmt, 0));
    }
  }
  sqlite3_finalize(stmt);
  return out;
}

// The span's args as one JSON object; NULL if it has none.
void ResultArgs(SpanCursor* c, sqlite3_context* ctx) {
  const SpanColumns& s = c->spans;
  const uint32_t begin = c->at == 0 ? 0 : s.arg_end[c->at - 1];
  const uint32_t end = s.arg_end.empty() ? 0 : s.arg_end[c->at];
  if (begin >= end) {
    sqlite3_result_null(ctx);
    return;
  }
  std::string json = "{";
  for (uint32_t a = begin; a < end; ++a) {
    const ChunkArg& arg = s.args[a];
    if (a > begin) json += ",";
    AppendJsonString(&json, LookupString(c->table->session, arg.key));
    json += ":";
    switch (arg.type) {
      case ChunkArg::Type::kInt:
        AppendJsonInt(&json, arg.value);
        break;
      case ChunkArg::Type::kReal:
        AppendJsonDouble(&json, arg.real);
        break;
      case ChunkArg::Type::kString:
        AppendJsonString(&json, LookupString(c->table->session, arg.value));
        break;
    }
  }
  json += "}";
  ResultText(ctx, json);
}

template <typename T>
void ResultIf(sqlite3_context* ctx, bool present, T value) {
  if (present) {
    sqlite3_result_int64(ctx, static_cast<sqlite3_int64>(value));
  } else {
    sqlite3_result_null(ctx);
  }
}

int ColumnValue(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int column) {
  auto* c = reinterpret_cast<SpanCursor*>(cur);
  const SpanColumns& s = c->spans;
  const size_t i = c->at;
  const uint8_t flags = s.flags[i];
  auto op_at = c->view->op_at.find(s.name[i]);
  if (op_at == c->view->op_at.end()) {
    return Fail(
        &c->table->base,
        absl::StrCat("a span of job ", c->view->job().name, " names operation ",
                     s.name[i], ", which the store does not list"));
  }
  const OpInfo& op = c->view->catalog.ops[op_at->second];
  switch (column) {
    case kSpanJob:
      ResultText(ctx, c->view->job().name);
      break;
    case kSpanRank:
      ResultIf(ctx, c->process->rank >= 0, c->process->rank);
      break;
    case kSpanNode:
      ResultText(ctx, c->process->node);
      break;
    case kSpanPid:
      sqlite3_result_int64(ctx, c->process->pid);
      break;
    case kSpanTid:
      ResultIf(ctx, c->track->kind == v1::TRACK_KIND_THREAD, c->track->ext_id);
      break;
    case kSpanTrack:
      ResultText(ctx, c->track->name);
      break;
    case kSpanCategory:
      ResultText(ctx, CategoryName(op.category));
      break;
    case kSpanName:
      ResultText(ctx, op.name);
      break;
    case kSpanStart:
    case kSpanDur:
    case kSpanEnd: {
      if (int rc = Place(c); rc != SQLITE_OK) return rc;
      const int64_t v = column == kSpanStart ? c->shown.start_ns
                        : column == kSpanDur
                            ? c->shown.dur_ns
                            : c->shown.start_ns + c->shown.dur_ns;
      sqlite3_result_int64(ctx, v);
      break;
    }
    case kSpanBytes:
      sqlite3_result_int64(ctx, s.bytes[i]);
      break;
    case kSpanPeer:
      ResultIf(ctx, flags & SpanColumns::kHasPeer, s.peer[i]);
      break;
    case kSpanTag:
      ResultIf(ctx, flags & SpanColumns::kHasTag, s.tag[i]);
      break;
    case kSpanComm:
      ResultIf(ctx, s.comm[i] != 0, s.comm[i]);
      break;
    case kSpanSeq:
      ResultIf(ctx, flags & SpanColumns::kHasSeq, s.seq[i]);
      break;
    case kSpanStep:
      ResultIf(ctx, flags & SpanColumns::kHasStep, s.step[i]);
      break;
    case kSpanArgs:
      ResultArgs(c, ctx);
      break;
    case kSpanRawStart:
      sqlite3_result_int64(ctx, s.start_ns[i]);
      break;
    case kSpanKind:
      ResultText(ctx, KindName(s.kind[i]));
      break;
    case kSpanValue:
      if (s.kind[i] == v1::SPAN_KIND_COUNTER) {
        sqlite3_result_double(ctx, s.value[i]);
      } else {
        sqlite3_result_null(ctx);
      }
      break;
    default:
      sqlite3_result_null(ctx);
  }
  return SQLITE_OK;
}

const sqlite3_module kSpanModule =
    ReadOnlyModule({Connect, BestIndex, Disconnect, Open, Close, Filter, Next,
                    Eof, ColumnValue, Rowid});

}  // namespace

int RegisterSpanModule(sqlite3* db, SqlSession* session) {
  return sqlite3_create_module_v2(db, "meridian_spans", &kSpanModule, session,
                                  nullptr);
}

}  // namespace meridian
