#include "import/nsight_sqlite_reader.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "import/nsight_schema.h"
#include "import/paths.h"
#include "import/stranger_sqlite.h"
#include "wire/span_rules.h"

namespace meridian {
namespace {

using stranger_sqlite::Column;
using stranger_sqlite::Harden;
using stranger_sqlite::SqliteError;
using stranger_sqlite::Stmt;
using stranger_sqlite::TableRows;

constexpr int64_t kMaxBytes = int64_t{1} << 50;  // a copy of 1 PiB: absurd
constexpr int64_t kKnownSchemaMajor = 3;

// globalTid: TID in bits 0-23, PID in bits 24-47, a hardware id above.
constexpr int kTidBits = 24;
constexpr int64_t kIdMask = 0xFFFFFF;

#define RETURN_IF_ERROR(expr)          \
  do {                                 \
    absl::Status status_ = (expr);     \
    if (!status_.ok()) return status_; \
  } while (false)

// A span as read, before its times are made absolute.
struct RawSpan {
  ImportedSpan span;  // span.track: index into Reader::tracks_
  const char* table;
};

struct RawTrack {
  int64_t process_key;  // globalTid >> 24
  v1::TrackKind kind;
  int64_t id;
  std::string name;
};

class Reader {
 public:
  Reader(sqlite3* db, const ImportOptions& options)
      : db_(db), options_(options) {}

  absl::StatusOr<ImportedTrace> Read();

 private:
  absl::Status LoadSchema();
  absl::Status CheckSchemaVersion();
  absl::Status LoadStrings();
  absl::Status LoadThreadNames();
  absl::Status LoadRanks();
  absl::Status LoadSessionStart();
  absl::Status ReadKernels();
  absl::Status ReadMemcpys();
  absl::Status ReadMemsets();
  absl::Status ReadRuntime();
  absl::Status ReadNvtx();
  absl::Status Finish(ImportedTrace* out);
  absl::Status Place(ImportedTrace* out);

  bool HasTable(const char* table) const { return columns_.count(table) > 0; }
  // A StringIds id read from column `i` of `rows`: its text.
  absl::Status String(const TableRows& rows, int i, std::string* out) const;
  // Reads start and end columns into span->start_ns and dur_ns.
  absl::Status Interval(const TableRows& rows, int start, int end,
                        ImportedSpan* span) const;
  // The GPU columns: interval, correlation and the stream's track.
  absl::Status GpuActivity(const TableRows& rows, ImportedSpan* span);
  int ThreadTrack(int64_t global_tid);
  int StreamTrack(int64_t process_key, int64_t device, int64_t stream);
  void Add(const char* table, ImportedSpan span) {
    spans_.push_back({std::move(span), table});
  }

  sqlite3* const db_;
  const ImportOptions& options_;
  std::map<std::string, std::set<std::string>> columns_;  // Nsight's tables
  std::string schema_ = "unknown";  // EXPORT_SCHEMA_VERSION
  absl::flat_hash_map<int64_t, std::string> strings_;
  // globalTid -> (priority, name).
  absl::flat_hash_map<int64_t, std::pair<int64_t, std::string>> thread_names_;
  std::map<int64_t, int32_t> ranks_;  // process key -> MPI rank
  std::optional<int64_t> session_start_ns_;

  std::vector<RawTrack> tracks_;
  std::map<std::tuple<int64_t, int, int64_t>, int> track_index_;
  std::vector<RawSpan> spans_;
  std::map<int64_t, int64_t> skipped_nvtx_;  // by event type
  int64_t unended_ranges_ = 0;
};

absl::Status Reader::LoadSchema() {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "SELECT name FROM sqlite_master WHERE type = 'table'",
                         -1, &raw, nullptr) != SQLITE_OK) {
    return SqliteError(db_, options_.file, "cannot read the schema");
  }
  Stmt tables(raw);
  int rc;
  while ((rc = sqlite3_step(tables.get())) == SQLITE_ROW) {
    const auto* name =
        reinterpret_cast<const char*>(sqlite3_column_text(tables.get(), 0));
    if (name == nullptr) continue;
    for (const char* known : nsight::kNsightTables) {
      if (strcmp(name, known) == 0) columns_[known];
    }
  }
  if (rc != SQLITE_DONE) {
    return SqliteError(db_, options_.file, "cannot read the schema");
  }
  if (columns_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        options_.file,
        ": an SQLite database but not an Nsight Systems export (none of its "
        "tables, e.g. ",
        nsight::kKernel, " or ", nsight::kStrings, ")"));
  }
  for (auto& [table, names] : columns_) {
    // Table names are this file's constants, never the file's text.
    const std::string sql = absl::StrCat("PRAGMA table_info(\"", table, "\")");
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
      return SqliteError(
          db_, options_.file,
          absl::StrCat("cannot read table ", table, "'s columns"));
    }
    Stmt info(raw);
    while ((rc = sqlite3_step(info.get())) == SQLITE_ROW) {
      const auto* name =
          reinterpret_cast<const char*>(sqlite3_column_text(info.get(), 1));
      if (name != nullptr) names.insert(name);
    }
    if (rc != SQLITE_DONE) {
      return SqliteError(
          db_, options_.file,
          absl::StrCat("cannot read table ", table, "'s columns"));
    }
  }
  return absl::OkStatus();
}

// META_DATA_EXPORT holds (name, value) rows; EXPORT_SCHEMA_VERSION is
// "major.minor.micro". A column of that name is accepted too.
absl::Status Reader::CheckSchemaVersion() {
  if (!HasTable(nsight::kMeta)) return absl::OkStatus();
  const std::set<std::string>& present = columns_[nsight::kMeta];
  const bool rows_form = present.count("name") && present.count("value");
  TableRows rows(db_, options_.file, schema_, nsight::kMeta);
  if (rows_form) {
    RETURN_IF_ERROR(rows.Open(present, {{"name", true}, {"value", true}}));
  } else {
    RETURN_IF_ERROR(rows.Open(present, {{"EXPORT_SCHEMA_VERSION", false}}));
  }
  const int value = rows_form ? 1 : 0;
  std::optional<std::string> version;
  while (!version) {
    absl::StatusOr<bool> next = rows.Next();
    if (!next.ok()) return next.status();
    if (!*next) break;
    if (rows_form && rows.Text(0) != "EXPORT_SCHEMA_VERSION") continue;
    if (!rows.Null(value)) version = rows.Text(value);
  }
  if (!version) return absl::OkStatus();
  int64_t major = 0;
  const size_t dot = version->find('.');
  if (!absl::SimpleAtoi(version->substr(0, dot), &major) || major < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        options_.file, ": ", nsight::kMeta, " EXPORT_SCHEMA_VERSION \"",
        version->substr(0, 40), "\" is not major.minor.micro"));
  }
  if (major != kKnownSchemaMajor) {
    return absl::InvalidArgumentError(
        absl::StrCat(options_.file, ": Nsight export schema version ",
                     version->substr(0, 40), "; this reader knows version ",
                     kKnownSchemaMajor, ".x (tables and columns may differ)"));
  }
  schema_ = *version;
  return absl::OkStatus();
}

absl::Status Reader::LoadStrings() {
  if (!HasTable(nsight::kStrings)) return absl::OkStatus();
  TableRows rows(db_, options_.file, schema_, nsight::kStrings);
  RETURN_IF_ERROR(
      rows.Open(columns_[nsight::kStrings], {{"id", true}, {"value", true}}));
  while (true) {
    absl::StatusOr<bool> next = rows.Next();
    if (!next.ok()) return next.status();
    if (!*next) return absl::OkStatus();
    int64_t id = 0;
    RETURN_IF_ERROR(rows.Int(0, INT64_MIN, INT64_MAX, &id));
    if (!strings_.try_emplace(id, rows.Text(1)).second) {
      return rows.Fail(0, absl::StrCat("repeats id ", id));
    }
  }
}

absl::Status Reader::String(const TableRows& rows, int i,
                            std::string* out) const {
  int64_t id = 0;
  RETURN_IF_ERROR(rows.Int(i, INT64_MIN, INT64_MAX, &id));
  auto it = strings_.find(id);
  if (it == strings_.end()) {
    return rows.Fail(i, absl::StrCat("is string id ", id, ", which ",
                                     nsight::kStrings, " does not hold"));
  }
  *out = it->second;
  return absl::OkStatus();
}

absl::Status Reader::LoadThreadNames() {
  if (!HasTable(nsight::kThreadNames)) return absl::OkStatus();
  TableRows rows(db_, options_.file, schema_, nsight::kThreadNames);
  RETURN_IF_ERROR(
      rows.Open(columns_[nsight::kThreadNames],
                {{"nameId", true}, {"globalTid", true}, {"priority", false}}));
  while (true) {
    absl::StatusOr<bool> next = rows.Next();
    if (!next.ok()) return next.status();
    if (!*next) return absl::OkStatus();
    int64_t tid = 0;
    std::optional<int64_t> priority;
    std::string name;
    RETURN_IF_ERROR(rows.Int(1, 0, INT64_MAX, &tid));
    RETURN_IF_ERROR(rows.OptionalInt(2, INT64_MIN, INT64_MAX, &priority));
    RETURN_IF_ERROR(String(rows, 0, &name));
    // The highest priority wins; among equals, the first.
    const int64_t rank = priority.value_or(INT64_MIN);
    auto it = thread_names_.find(tid);
    if (it == thread_names_.end()) {
      thread_names_.emplace(tid, std::make_pair(rank, std::move(name)));
    } else if (rank > it->second.first) {
      it->second = {rank, std::move(name)};
    }
  }
}

absl::Status Reader::LoadRanks() {
  if (!HasTable(nsight::kRanks)) return absl::OkStatus();
  TableRows rows(db_, options_.file, schema_, nsight::kRanks);
  RETURN_IF_ERROR(rows.Open(columns_[nsight::kRanks],
                            {{"globalTid", true}, {"rank", true}}));
  std::map<int64_t, int64_t> process_of_rank;
  while (true) {
    absl::StatusOr<bool> next = rows.Next();
    if (!next.ok()) return next.status();
    if (!*next) return absl::OkStatus();
    int64_t tid = 0;
    int64_t rank = 0;
    RETURN_IF_ERROR(rows.Int(0, 0, INT64_MAX, &tid));
    RETURN_IF_ERROR(rows.Int(1, 0, (1 << 24) - 1, &rank));
    const int64_t process = tid >> kTidBits;
    auto [it, added] = ranks_.try_emplace(process, rank);
    if (!added && it->second != rank) {
      return rows.Fail(
          1, absl::StrCat("gives process ", process & kIdMask, " rank ", rank,
                          " after rank ", it->second));
    }
    auto [other, fresh] = process_of_rank.try_emplace(rank, process);
    if (!fresh && other->second != process) {
      return rows.Fail(
          1, absl::StrCat("gives rank ", rank, " to a second process (",
                          process & kIdMask, ")"));
    }
  }
}

absl::Status Reader::LoadSessionStart() {
  if (!HasTable(nsight::kSession)) return absl::OkStatus();
  TableRows rows(db_, options_.file, schema_, nsight::kSession);
  RETURN_IF_ERROR(
      rows.Open(columns_[nsight::kSession], {{"utcEpochNs", true}}));
  absl::StatusOr<bool> next = rows.Next();
  if (!next.ok()) return next.status();
  if (!*next) return absl::OkStatus();  // empty: as if absent
  int64_t start = 0;
  RETURN_IF_ERROR(rows.Int(0, kMinTimestampNs, kMaxTimestampNs, &start));
  session_start_ns_ = start;
  return absl::OkStatus();
}

absl::Status Reader::Interval(const TableRows& rows, int start, int end,
                              ImportedSpan* span) const {
  int64_t from = 0;
  int64_t to = 0;
  RETURN_IF_ERROR(rows.Int(start, INT64_MIN, INT64_MAX, &from));
  RETURN_IF_ERROR(rows.Int(end, INT64_MIN, INT64_MAX, &to));
  const __int128 dur = static_cast<__int128>(to) - from;
  if (dur < 0) {
    return rows.Fail(end, absl::StrCat("is ", to, ", before start ", from));
  }
  if (dur > kMaxDurationNs) {
    return rows.Fail(end, absl::StrCat("is ", static_cast<int64_t>(dur),
                                       " ns after start: longer than 30 days"));
  }
  span->start_ns = from;
  span->dur_ns = static_cast<int64_t>(dur);
  return absl::OkStatus();
}

int Reader::ThreadTrack(int64_t global_tid) {
  const int64_t tid = global_tid & kIdMask;
  auto [it, added] = track_index_.try_emplace(
      {global_tid >> kTidBits, v1::TRACK_KIND_THREAD, tid},
      static_cast<int>(tracks_.size()));
  if (added) {
    auto name = thread_names_.find(global_tid);
    tracks_.push_back(
        {global_tid >> kTidBits, v1::TRACK_KIND_THREAD, tid,
         name != thread_names_.end() && !name->second.second.empty()
             ? name->second.second
             : absl::StrCat("thread ", tid)});
  }
  return it->second;
}

int Reader::StreamTrack(int64_t process_key, int64_t device, int64_t stream) {
  const int64_t id = device << 32 | stream;
  auto [it, added] =
      track_index_.try_emplace({process_key, v1::TRACK_KIND_GPU_STREAM, id},
                               static_cast<int>(tracks_.size()));
  if (added) {
    tracks_.push_back({process_key, v1::TRACK_KIND_GPU_STREAM, id,
                       absl::StrCat("GPU ", device, " stream ", stream)});
  }
  return it->second;
}

absl::Status Reader::GpuActivity(const TableRows& rows, ImportedSpan* span) {
  int64_t device = 0;
  int64_t stream = 0;
  int64_t pid = 0;
  std::optional<int64_t> correlation;
  RETURN_IF_ERROR(Interval(rows, nsight::kStart, nsight::kEnd, span));
  RETURN_IF_ERROR(rows.Int(nsight::kDevice, 0, INT32_MAX, &device));
  RETURN_IF_ERROR(rows.Int(nsight::kStream, 0, UINT32_MAX, &stream));
  RETURN_IF_ERROR(
      rows.OptionalInt(nsight::kCorrelation, 0, INT64_MAX, &correlation));
  RETURN_IF_ERROR(rows.Int(nsight::kGlobalPid, 0, INT64_MAX, &pid));
  span->correlation = static_cast<uint64_t>(correlation.value_or(0));
  span->track = StreamTrack(pid >> kTidBits, device, stream);
  span->event = rows.row();
  return absl::OkStatus();
}

absl::Status Reader::ReadKernels() {
  if (!HasTable(nsight::kKernel)) return absl::OkStatus();
  const std::set<std::string>& present = columns_[nsight::kKernel];
  // Names: demangled as the capture names kernels, else short, else
  // mangled; a table must have one of them.
  enum {
    kDemangled = 6,
    kShort,
    kMangled,
    kGrid,
    kBlock = kGrid + 3,
    kRegisters = kBlock + 3,
    kStaticSmem,
    kDynamicSmem
  };
  const char* const names[] = {"demangledName", "shortName", "mangledName"};
  if (!present.count(names[0]) && !present.count(names[1]) &&
      !present.count(names[2])) {
    return absl::InvalidArgumentError(
        absl::StrCat(options_.file, ": table ", nsight::kKernel,
                     " has no column demangledName, shortName or mangledName"));
  }
  TableRows rows(db_, options_.file, schema_, nsight::kKernel);
  RETURN_IF_ERROR(
      rows.Open(present, nsight::GpuColumns({{names[0], false},
                                             {names[1], false},
                                             {names[2], false},
                                             {"gridX", false},
                                             {"gridY", false},
                                             {"gridZ", false},
                                             {"blockX", false},
                                             {"blockY", false},
                                             {"blockZ", false},
                                             {"registersPerThread", false},
                                             {"staticSharedMemory", false},
                                             {"dynamicSharedMemory", false}})));
  while (true) {
    absl::StatusOr<bool> next = rows.Next();
    if (!next.ok()) return next.status();
    if (!*next) return absl::OkStatus();
    ImportedSpan span;
    span.category = v1::CATEGORY_CUDA_KERNEL;
    RETURN_IF_ERROR(GpuActivity(rows, &span));
    for (int i = kDemangled; i <= kMangled && span.name.empty(); ++i) {
      if (!rows.Null(i)) RETURN_IF_ERROR(String(rows, i, &span.name));
    }
    if (span.name.empty()) span.name = "kernel";
    // Args as the capture writes them: grid and block "X,Y,Z".
    for (const auto& [first, key] :
         {std::pair<int, const char*>{kGrid, "grid"}, {kBlock, "block"}}) {
      std::optional<int64_t> v[3];
      for (int d = 0; d < 3; ++d) {
        RETURN_IF_ERROR(rows.OptionalInt(first + d, 0, INT32_MAX, &v[d]));
      }
      if (v[0] && v[1] && v[2]) {
        span.args.push_back({key, absl::StrCat(*v[0], ",", *v[1], ",", *v[2])});
      }
    }
    std::optional<int64_t> registers;
    std::optional<int64_t> smem[2];
    RETURN_IF_ERROR(rows.OptionalInt(kRegisters, 0, INT32_MAX, &registers));
    RETURN_IF_ERROR(rows.OptionalInt(kStaticSmem, 0, INT32_MAX, &smem[0]));
    RETURN_IF_ERROR(rows.OptionalInt(kDynamicSmem, 0, INT32_MAX, &smem[1]));
    if (registers) span.args.push_back({"registers", *registers});
    if (smem[0] || smem[1]) {
      span.args.push_back({"smem", smem[0].value_or(0) + smem[1].value_or(0)});
    }
    Add(nsight::kKernel, std::move(span));
  }
}

absl::Status Reader::ReadMemcpys() {
  if (!HasTable(nsight::kMemcpy)) return absl::OkStatus();
  enum { kBytes = 6, kCopyKind, kSrcKind, kDstKind, kSrcDevice, kDstDevice };
  TableRows rows(db_, options_.file, schema_, nsight::kMemcpy);
  RETURN_IF_ERROR(rows.Open(columns_[nsight::kMemcpy],
                            nsight::GpuColumns({{"bytes", true},
                                                {"copyKind", true},
                                                {"srcKind", false},
                                                {"dstKind", false},
                                                {"srcDeviceId", false},
                                                {"dstDeviceId", false}})));
  while (true) {
    absl::StatusOr<bool> next = rows.Next();
    if (!next.ok()) return next.status();
    if (!*next) return absl::OkStatus();
    ImportedSpan span;
    span.category = v1::CATEGORY_CUDA_MEMCPY;
    RETURN_IF_ERROR(GpuActivity(rows, &span));
    RETURN_IF_ERROR(rows.Int(kBytes, 0, kMaxBytes, &span.bytes));
    int64_t kind = 0;
    std::optional<int64_t> src;
    std::optional<int64_t> dst;
    RETURN_IF_ERROR(rows.Int(kCopyKind, INT64_MIN, INT64_MAX, &kind));
    span.name = nsight::CopyName(kind);
    RETURN_IF_ERROR(rows.OptionalInt(kSrcKind, INT64_MIN, INT64_MAX, &src));
    RETURN_IF_ERROR(rows.OptionalInt(kDstKind, INT64_MIN, INT64_MAX, &dst));
    if (src) span.args.push_back({"src", nsight::MemoryName(*src)});
    if (dst) span.args.push_back({"dst", nsight::MemoryName(*dst)});
    if (span.name == "Memcpy PtoP") {
      RETURN_IF_ERROR(rows.OptionalInt(kSrcDevice, 0, INT32_MAX, &src));
      RETURN_IF_ERROR(rows.OptionalInt(kDstDevice, 0, INT32_MAX, &dst));
      if (src) span.args.push_back({"src_device", *src});
      if (dst) span.args.push_back({"dst_device", *dst});
    }
    Add(nsight::kMemcpy, std::move(span));
  }
}

absl::Status Reader::ReadMemsets() {
  if (!HasTable(nsight::kMemset)) return absl::OkStatus();
  constexpr int kBytes = 6;
  TableRows rows(db_, options_.file, schema_, nsight::kMemset);
  RETURN_IF_ERROR(rows.Open(columns_[nsight::kMemset],
                            nsight::GpuColumns({{"bytes", true}})));
  while (true) {
    absl::StatusOr<bool> next = rows.Next();
    if (!next.ok()) return next.status();
    if (!*next) return absl::OkStatus();
    ImportedSpan span;
    span.category = v1::CATEGORY_CUDA_MEMSET;
    span.name = "Memset";
    RETURN_IF_ERROR(GpuActivity(rows, &span));
    RETURN_IF_ERROR(rows.Int(kBytes, 0, kMaxBytes, &span.bytes));
    Add(nsight::kMemset, std::move(span));
  }
}

absl::Status Reader::ReadRuntime() {
  if (!HasTable(nsight::kRuntime)) return absl::OkStatus();
  enum { kStartCol, kEndCol, kTid, kCorrelationCol, kName };
  TableRows rows(db_, options_.file, schema_, nsight::kRuntime);
  RETURN_IF_ERROR(
      rows.Open(columns_[nsight::kRuntime], {{"start", true},
                                             {"end", true},
                                             {"globalTid", true},
                                             {"correlationId", true},
                                             {"nameId", true}}));
  while (true) {
    absl::StatusOr<bool> next = rows.Next();
    if (!next.ok()) return next.status();
    if (!*next) return absl::OkStatus();
    ImportedSpan span;
    int64_t tid = 0;
    std::optional<int64_t> correlation;
    RETURN_IF_ERROR(Interval(rows, kStartCol, kEndCol, &span));
    RETURN_IF_ERROR(rows.Int(kTid, 0, INT64_MAX, &tid));
    RETURN_IF_ERROR(
        rows.OptionalInt(kCorrelationCol, 0, INT64_MAX, &correlation));
    RETURN_IF_ERROR(String(rows, kName, &span.name));
    span.name = nsight::RuntimeName(std::move(span.name));
    if (span.name.empty()) return rows.Fail(kName, "names an empty string");
    span.category = absl::StrContains(span.name, "Synchronize")
                        ? v1::CATEGORY_CUDA_SYNC
                        : v1::CATEGORY_CUDA_RUNTIME;
    span.correlation = static_cast<uint64_t>(correlation.value_or(0));
    span.track = ThreadTrack(tid);
    span.event = rows.row();
    Add(nsight::kRuntime, std::move(span));
  }
}

absl::Status Reader::ReadNvtx() {
  if (!HasTable(nsight::kNvtx)) return absl::OkStatus();
  const std::set<std::string>& present = columns_[nsight::kNvtx];
  enum {
    kStartCol,
    kEndCol,
    kType,
    kTid,
    kEndTid,
    kText,
    kTextId,
    kDomain,
    kInt64,
    kDouble
  };
  if (!present.count("text") && !present.count("textId")) {
    return absl::InvalidArgumentError(
        absl::StrCat(options_.file, ": table ", nsight::kNvtx,
                     " has no column text or textId"));
  }
  TableRows rows(db_, options_.file, schema_, nsight::kNvtx);
  RETURN_IF_ERROR(rows.Open(present, {{"start", true},
                                      {"end", true},
                                      {"eventType", true},
                                      {"globalTid", true},
                                      {"endGlobalTid", false},
                                      {"text", false},
                                      {"textId", false},
                                      {"domainId", false},
                                      {"int64Value", false},
                                      {"doubleValue", false}}));
  std::map<int64_t, std::string> domains;
  std::vector<std::pair<size_t, int64_t>> domain_of;  // (span, domainId)
  while (true) {
    absl::StatusOr<bool> next = rows.Next();
    if (!next.ok()) return next.status();
    if (!*next) break;
    int64_t type = 0;
    RETURN_IF_ERROR(rows.Int(kType, INT64_MIN, INT64_MAX, &type));
    std::optional<int64_t> domain;
    RETURN_IF_ERROR(rows.OptionalInt(kDomain, INT64_MIN, INT64_MAX, &domain));
    const bool names_domain = type == nsight::kNvtxDomainCreate && domain;
    if (!names_domain && type != nsight::kNvtxMark &&
        type != nsight::kNvtxPushPop && type != nsight::kNvtxStartEnd) {
      ++skipped_nvtx_[type];
      continue;
    }
    std::string name = rows.Text(kText);
    if (rows.Null(kText) && !rows.Null(kTextId)) {
      RETURN_IF_ERROR(String(rows, kTextId, &name));
    }
    if (names_domain) {
      domains[*domain] = std::move(name);
      continue;
    }
    ImportedSpan span;
    span.category = v1::CATEGORY_NVTX;
    span.event = rows.row();
    if (type == nsight::kNvtxMark) {
      RETURN_IF_ERROR(
          rows.Int(kStartCol, INT64_MIN, INT64_MAX, &span.start_ns));
      span.kind = v1::SPAN_KIND_INSTANT;
    } else if (rows.Null(kEndCol)) {
      ++unended_ranges_;
      continue;
    } else {
      RETURN_IF_ERROR(Interval(rows, kStartCol, kEndCol, &span));
    }
    span.name = !name.empty()               ? std::move(name)
                : type == nsight::kNvtxMark ? "(unnamed mark)"
                                            : "(unnamed range)";
    int64_t tid = 0;
    // A start/end range goes on the thread that ended it, as the capture
    // puts it.
    const int tid_column =
        type == nsight::kNvtxStartEnd && !rows.Null(kEndTid) ? kEndTid : kTid;
    RETURN_IF_ERROR(rows.Int(tid_column, 0, INT64_MAX, &tid));
    span.track = ThreadTrack(tid);
    std::optional<int64_t> int_payload;
    std::optional<double> real_payload;
    RETURN_IF_ERROR(
        rows.OptionalInt(kInt64, INT64_MIN, INT64_MAX, &int_payload));
    RETURN_IF_ERROR(rows.OptionalReal(kDouble, &real_payload));
    if (int_payload) {
      span.args.push_back({"payload", *int_payload});
    } else if (real_payload) {
      span.args.push_back({"payload", *real_payload});
    }
    if (domain) domain_of.push_back({spans_.size(), *domain});
    Add(nsight::kNvtx, std::move(span));
  }
  // Domains are named by their DomainCreate row, wherever it is.
  for (const auto& [index, id] : domain_of) {
    auto it = domains.find(id);
    if (it == domains.end() || it->second.empty()) continue;
    std::vector<ImportedArg>& args = spans_[index].span.args;
    args.insert(args.begin(), ImportedArg{"domain", it->second});
  }
  return absl::OkStatus();
}

// Processes in PID order, their ranks and nodes; tracks to them.
absl::Status Reader::Finish(ImportedTrace* out) {
  out->format = "nsight";
  std::set<std::pair<int64_t, int64_t>> keys;  // (PID, process key)
  std::set<int64_t> hardware;
  for (const RawTrack& t : tracks_) {
    keys.insert({t.process_key & kIdMask, t.process_key});
    hardware.insert(t.process_key >> kTidBits);
  }
  // MPI_RANKS's ranks are its processes', whether they have spans or not.
  std::set<int32_t> taken;
  for (const auto& [key, rank] : ranks_) taken.insert(rank);
  const std::string node =
      options_.node.empty() ? PathBaseName(options_.file) : options_.node;
  int32_t next = std::max(options_.rank, 0);
  std::map<int64_t, int> process_of;
  for (const auto& [pid, key] : keys) {
    ProcessDesc p;
    p.pid = pid;
    // Processes of several machines in one report: one node each.
    p.node =
        hardware.size() > 1 ? absl::StrCat(node, "#", key >> kTidBits) : node;
    auto named = ranks_.find(key);
    if (named != ranks_.end()) {
      p.rank = named->second;
    } else {
      while (taken.count(next)) ++next;
      p.rank = next;
      taken.insert(next);
    }
    process_of[key] = static_cast<int>(out->processes.size());
    out->processes.push_back(std::move(p));
  }
  for (RawTrack& t : tracks_) {
    out->tracks.push_back(
        {process_of[t.process_key], t.kind, t.id, std::move(t.name)});
  }
  std::vector<std::string> absent;
  for (const char* table : nsight::kEventTables) {
    if (!HasTable(table)) absent.push_back(table);
  }
  if (!absent.empty()) {
    std::string list;
    for (const std::string& table : absent) {
      absl::StrAppend(&list, list.empty() ? "" : ", ", table);
    }
    out->notes.push_back(absl::StrCat(
        "tables not in the file (nsys writes a table only for activity it "
        "recorded): ",
        list));
  }
  if (unended_ranges_ > 0) {
    out->notes.push_back(absl::StrCat(
        unended_ranges_, " NVTX ranges without an end were skipped"));
  }
  if (!skipped_nvtx_.empty()) {
    std::string types;
    int64_t skipped = 0;
    for (const auto& [type, n] : skipped_nvtx_) {
      absl::StrAppend(&types, types.empty() ? "" : ", ", type, ": ", n);
      skipped += n;
    }
    out->notes.push_back(absl::StrCat(
        skipped, " NVTX events of types not imported (eventType ", types, ")"));
  }
  return Place(out);
}

// Makes times absolute and checks them.
absl::Status Reader::Place(ImportedTrace* out) {
  int64_t base = 0;
  const char* source = "epoch";
  if (session_start_ns_) {
    base = *session_start_ns_;
    source = "session start";
  } else if (options_.epoch_ns) {
    base = *options_.epoch_ns;
  } else if (options_.fallback_end_ns > 0 && !spans_.empty()) {
    __int128 last = INT64_MIN;
    for (const RawSpan& s : spans_) {
      last = std::max(last,
                      static_cast<__int128>(s.span.start_ns) + s.span.dur_ns);
    }
    const __int128 b = options_.fallback_end_ns - last;
    base = b < INT64_MIN   ? INT64_MIN
           : b > INT64_MAX ? INT64_MAX
                           : static_cast<int64_t>(b);
    out->notes.push_back(absl::StrCat(
        "the file gives no session start (", nsight::kSession,
        "): placed to end at the file's modification time (SessionNs 0 = ",
        base, " ns since the Unix epoch; --epoch-ns sets it)"));
  }
  out->spans.reserve(spans_.size());
  for (RawSpan& s : spans_) {
    const __int128 start = static_cast<__int128>(s.span.start_ns) + base;
    if (start < kMinTimestampNs || start + s.span.dur_ns > kMaxTimestampNs) {
      return absl::InvalidArgumentError(absl::StrCat(
          options_.file, ": table ", s.table, " row ", s.span.event, " (\"",
          s.span.name.substr(0, Utf8Prefix(s.span.name, 80)),
          "\"): column \"start\": ", s.span.start_ns, " ns + ", source, " ",
          base,
          " ns is not a time between 2000 and 2100 (an absurd timestamp, or "
          "no session start: --epoch-ns)"));
    }
    s.span.start_ns = static_cast<int64_t>(start);
    out->spans.push_back(std::move(s.span));
  }
  spans_.clear();
  return absl::OkStatus();
}

absl::StatusOr<ImportedTrace> Reader::Read() {
  RETURN_IF_ERROR(Harden(db_, options_.file));
  RETURN_IF_ERROR(LoadSchema());
  RETURN_IF_ERROR(CheckSchemaVersion());
  RETURN_IF_ERROR(LoadStrings());
  RETURN_IF_ERROR(LoadThreadNames());
  RETURN_IF_ERROR(LoadRanks());
  RETURN_IF_ERROR(LoadSessionStart());
  RETURN_IF_ERROR(ReadKernels());
  RETURN_IF_ERROR(ReadMemcpys());
  RETURN_IF_ERROR(ReadMemsets());
  RETURN_IF_ERROR(ReadRuntime());
  RETURN_IF_ERROR(ReadNvtx());
  ImportedTrace trace;
  RETURN_IF_ERROR(Finish(&trace));
  return trace;
}

ImportOptions WithFile(const ImportOptions& options, const std::string& file) {
  ImportOptions named = options;
  if (named.file.empty()) named.file = file;
  return named;
}

}  // namespace

absl::StatusOr<ImportedTrace> ReadNsightSqlite(const std::string& path,
                                               const ImportOptions& options) {
  const ImportOptions named = WithFile(options, path);
  auto db = OpenStrangerSqlite(path, named.file);
  if (!db.ok()) return db.status();
  Reader reader(db->get(), named);
  return reader.Read();
}

absl::StatusOr<ImportedTrace> ReadNsightSqliteImage(
    std::string_view image, const ImportOptions& options) {
  const ImportOptions named = WithFile(options, "(memory)");
  auto db = OpenStrangerSqliteImage(image, named.file);
  if (!db.ok()) return db.status();
  Reader reader(db->get(), named);
  return reader.Read();
}

}  // namespace meridian
