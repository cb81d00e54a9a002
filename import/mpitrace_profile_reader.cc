#include "import/mpitrace_profile_reader.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

constexpr int64_t kMaxCalls = 1000000000000000;     // 10^15
constexpr int64_t kMaxAvgBytes = int64_t{1} << 50;  // 1 PiB
constexpr int64_t kMaxSeconds = 365LL * 24 * 3600;  // a year
constexpr int64_t kMaxRssBytes = int64_t{1} << 50;  // 1 PiB
constexpr int32_t kMaxWorldSize = 1 << 24;
constexpr int64_t kNsPerSecond = 1000000000;
constexpr int64_t kBytesPerMiB = 1 << 20;
constexpr int kMaxDigits = 18;  // so that digits x 2^63 fits an __int128

// A decimal number as written: digits / 10^scale.
struct Decimal {
  int64_t digits = 0;
  int scale = 0;
};

// "12.345" -> {12345, 3}. No sign, no exponent; at most kMaxDigits
// digits besides leading zeros.
bool ParseDecimal(std::string_view text, Decimal* out) {
  Decimal d;
  int significant = 0;
  bool any = false;
  bool point = false;
  for (char c : text) {
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
    any = true;
    if (d.digits == 0 && c == '0' && !point) continue;
    if (++significant > kMaxDigits) return false;
    d.digits = d.digits * 10 + (c - '0');
    if (point) ++d.scale;
  }
  if (!any) return false;
  *out = d;
  return true;
}

// round(d x multiplier), halves up; false if it does not fit an int64.
bool Scaled(const Decimal& d, int64_t multiplier, int64_t* out) {
  __int128 divisor = 1;
  for (int i = 0; i < d.scale; ++i) divisor *= 10;
  const __int128 product = static_cast<__int128>(d.digits) * multiplier;
  const __int128 value = (product + divisor / 2) / divisor;
  if (value > INT64_MAX) return false;
  *out = static_cast<int64_t>(value);
  return true;
}

double ToDouble(const Decimal& d) {
  double v = static_cast<double>(d.digits);
  for (int i = 0; i < d.scale; ++i) v /= 10;
  return v;
}

// Meridian's size bucket of an average (the header's comment).
int32_t BucketOf(const Decimal& avg) {
  if (avg.digits == 0) return -1;
  int64_t whole = avg.digits;
  for (int i = 0; i < avg.scale; ++i) whole /= 10;
  int32_t log2 = 0;
  while (whole > 1) {
    whole >>= 1;
    ++log2;
  }
  return log2;  // floor(log2(whole)) = floor(log2(avg)); 0 below 2
}

std::vector<std::string_view> Tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

// absl::StrCat takes absl::string_view, which is not std::string_view in
// this build.
absl::string_view A(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool Dashes(std::string_view s) {
  return s.size() >= 3 && s.find_first_not_of('-') == std::string_view::npos;
}

// A quoted piece of the file for messages: at most 40 bytes.
std::string Quote(std::string_view text) {
  std::string q(text.substr(0, 40));
  for (char& c : q) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7F || c == '"') c = '?';  // ASCII in messages
  }
  return absl::StrCat("\"", q, text.size() > 40 ? "...\"" : "\"");
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& file)
      : text_(text), file_(file) {}

  absl::StatusOr<MpitraceProfile> Parse();

 private:
  enum class Section {
    kHead,       // before "Data for MPI rank"
    kPreamble,   // after it, before the routine table
    kRoutines,   // the routine table's rows
    kTotals,     // summary lines and others after the table
    kSizes,      // "Message size distributions:"
    kAllTasks,   // rank 0's "Summary for all tasks:"
    kRankTable,  // "MPI timing summary for all ranks:"
    kSkipped,    // a section this reader does not know
  };

  absl::Status Fail(const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ":", line_, ": ", what));
  }
  // `what` of field `field` (of `context`, e.g. a routine) is wrong.
  absl::Status FieldError(std::string_view context, std::string_view field,
                          std::string_view text,
                          const std::string& what) const {
    return Fail(absl::StrCat(context.empty() ? "" : std::string(context) + ": ",
                             "field \"", std::string(field),
                             "\": ", Quote(text), " ", what));
  }

  absl::Status Line(std::string_view line);
  bool Sentinel(std::string_view line, const std::vector<std::string_view>& t,
                absl::Status* status);
  absl::Status DataLine(std::string_view line);
  absl::Status Total(std::string_view key, std::optional<int64_t>* out,
                     const std::vector<std::string_view>& value);
  absl::Status RoutineRow(const std::vector<std::string_view>& t);
  absl::Status SizeLine(const std::vector<std::string_view>& t);
  absl::Status AllTasksLine(const std::vector<std::string_view>& t);
  absl::Status RankTableLine(const std::vector<std::string_view>& t);
  absl::Status RankTableRow(const std::vector<std::string_view>& t);
  absl::Status Finish();

  absl::Status Count(std::string_view context, std::string_view field,
                     std::string_view text, int64_t max, int64_t* out) const;
  absl::Status Number(std::string_view context, std::string_view field,
                      std::string_view text, int64_t max_whole,
                      Decimal* out) const;
  absl::Status Seconds(std::string_view context, std::string_view field,
                       std::string_view text, int64_t* ns) const;
  absl::Status Rank(std::string_view context, std::string_view field,
                    std::string_view text, int32_t* rank) const;

  const std::string_view text_;
  const std::string& file_;
  int64_t line_ = 0;
  Section section_ = Section::kHead;
  MpitraceProfile profile_;
  bool routine_table_ = false;
  bool table_underlined_ = false;  // the dashes under its header
  std::map<std::string, size_t, std::less<>> routine_index_;
  std::map<size_t, int64_t> distribution_line_;  // routine -> its header
  // The distribution being read: its routine and buckets by log2.
  std::optional<size_t> sizes_of_;
  std::map<size_t, std::map<int32_t, MpitraceSizeBucket>> buckets_;
  std::map<std::string, size_t> rank_columns_;  // column name -> index
  size_t rank_column_count_ = 0;
};

absl::Status Parser::Count(std::string_view context, std::string_view field,
                           std::string_view text, int64_t max,
                           int64_t* out) const {
  if (StartsWith(text, "-"))
    return FieldError(context, field, text, "is negative");
  if (text.empty() ||
      text.find_first_not_of("0123456789") != std::string_view::npos) {
    return FieldError(context, field, text, "is not a whole number");
  }
  Decimal d;
  if (!ParseDecimal(text, &d) || d.digits > max) {
    return FieldError(context, field, text,
                      absl::StrCat("is over ", max, ": an absurd value"));
  }
  *out = d.digits;
  return absl::OkStatus();
}

absl::Status Parser::Number(std::string_view context, std::string_view field,
                            std::string_view text, int64_t max_whole,
                            Decimal* out) const {
  if (StartsWith(text, "-"))
    return FieldError(context, field, text, "is negative");
  if (!ParseDecimal(text, out)) {
    return FieldError(context, field, text, "is not a decimal number");
  }
  int64_t whole = out->digits;
  for (int i = 0; i < out->scale; ++i) whole /= 10;
  if (whole >= max_whole) {
    return FieldError(context, field, text,
                      absl::StrCat("is over ", max_whole, ": an absurd value"));
  }
  return absl::OkStatus();
}

absl::Status Parser::Seconds(std::string_view context, std::string_view field,
                             std::string_view text, int64_t* ns) const {
  Decimal d;
  absl::Status status = Number(context, field, text, kMaxSeconds, &d);
  if (!status.ok()) return status;
  Scaled(d, kNsPerSecond, ns);  // fits: under a year
  return absl::OkStatus();
}

absl::Status Parser::Rank(std::string_view context, std::string_view field,
                          std::string_view text, int32_t* rank) const {
  int64_t r = 0;
  absl::Status status = Count(context, field, text, kMaxWorldSize, &r);
  if (!status.ok()) return status;
  if (r >= profile_.world_size) {
    return FieldError(
        context, field, text,
        absl::StrCat("is not a rank of the ", profile_.world_size, " ranks"));
  }
  *rank = static_cast<int32_t>(r);
  return absl::OkStatus();
}

// "Data for MPI rank R of N:", perhaps with " (all communicators)" after
// the colon or before it.
absl::Status Parser::DataLine(std::string_view line) {
  if (section_ != Section::kHead) {
    return Fail(
        "a second \"Data for MPI rank\" line: one file holds one rank's "
        "profile");
  }
  const std::vector<std::string_view> t = Tokens(line);
  if (t.size() < 7 || t[5] != "of") {
    return Fail(absl::StrCat("expected \"Data for MPI rank R of N:\", found ",
                             Quote(line)));
  }
  std::string_view n = t[6];
  if (!n.empty() && n.back() == ':') n.remove_suffix(1);
  int64_t world = 0;
  absl::Status status = Count("", "N", n, kMaxWorldSize, &world);
  if (!status.ok()) return status;
  if (world == 0) return FieldError("", "N", n, "is not a number of ranks");
  profile_.world_size = static_cast<int32_t>(world);
  status = Rank("", "R", t[4], &profile_.rank);
  if (!status.ok()) return status;
  profile_.all_communicators =
      line.find("(all communicators)") != std::string_view::npos;
  section_ = Section::kPreamble;
  return absl::OkStatus();
}

// "KEY = VALUE UNIT." for the summary lines. Their unit is required: a
// line without one was cut.
absl::Status Parser::Total(std::string_view key, std::optional<int64_t>* out,
                           const std::vector<std::string_view>& value) {
  if (out->has_value()) return Fail(absl::StrCat(A(key), ": given twice"));
  if (value.size() != 2) {
    return Fail(absl::StrCat(A(key), ": expected \"= VALUE UNIT\", found ",
                             value.size(), " words after \"=\""));
  }
  std::string_view unit = value[1];
  if (!unit.empty() && unit.back() == '.') unit.remove_suffix(1);
  if (key == "max resident set size") {
    if (unit != "MiB" && unit != "MB" && unit != "MBytes") {
      return FieldError(key, "unit", value[1], "is not MiB");
    }
    Decimal d;
    absl::Status status =
        Number(key, "value", value[0], kMaxRssBytes / kBytesPerMiB, &d);
    if (!status.ok()) return status;
    int64_t bytes = 0;
    Scaled(d, kBytesPerMiB, &bytes);
    *out = bytes;
    return absl::OkStatus();
  }
  if (unit != "seconds" && unit != "sec") {
    return FieldError(key, "unit", value[1], "is not seconds");
  }
  int64_t ns = 0;
  absl::Status status = Seconds(key, "value", value[0], &ns);
  if (status.ok()) *out = ns;
  return status;
}

// Lines known wherever they are (but in a skipped section, which ends
// only at a section's sentinel). True if `line` was one.
bool Parser::Sentinel(std::string_view line,
                      const std::vector<std::string_view>& t,
                      absl::Status* status) {
  if (StartsWith(line, "Data for MPI rank ")) {
    *status = DataLine(line);
    return true;
  }
  struct Start {
    const char* text;
    Section section;
  };
  static const Start kStarts[] = {
      {"Message size distributions", Section::kSizes},
      {"Summary for all tasks", Section::kAllTasks},
      {"Communication summary for all tasks", Section::kAllTasks},
      {"MPI timing summary for all ranks", Section::kRankTable},
      {"Profile data by communicator size", Section::kSkipped},
      {"Histogram of times spent in MPI", Section::kSkipped},
  };
  for (const Start& s : kStarts) {
    if (!StartsWith(line, s.text)) continue;
    if (section_ == Section::kHead) {
      *status = Fail(
          absl::StrCat(Quote(line), " before the \"Data for MPI rank\" line"));
    }
    section_ = s.section;
    sizes_of_.reset();
    rank_column_count_ = 0;
    return true;
  }
  if (section_ == Section::kSkipped || section_ == Section::kHead) return false;
  if (t.size() >= 2 && t[0] == "MPI" && t[1] == "Routine" && !routine_table_) {
    routine_table_ = true;
    section_ = Section::kRoutines;
    return true;
  }
  // "MPI task R of N had the minimum communication time."
  if (t.size() == 10 && t[0] == "MPI" && t[1] == "task" && t[5] == "had" &&
      t[8] == "communication") {
    profile_.comm_time_roles.push_back(std::string(t[7]));
    section_ = Section::kTotals;
    return true;
  }
  const size_t eq = line.find('=');
  if (eq == std::string_view::npos) return false;
  const std::string_view key = Trim(line.substr(0, eq));
  const std::pair<const char*, std::optional<int64_t>*> kTotals[] = {
      {"total communication time", &profile_.comm_ns},
      {"total elapsed time", &profile_.elapsed_ns},
      {"user cpu time", &profile_.user_ns},
      {"system time", &profile_.system_ns},
      {"max resident set size", &profile_.max_rss_bytes},
      {"synchronization time", &profile_.sync_ns},
      {"total MPI-IO time", &profile_.mpi_io_ns},
  };
  for (const auto& [name, out] : kTotals) {
    if (key != name) continue;
    *status = Total(key, out, Tokens(line.substr(eq + 1)));
    section_ = Section::kTotals;
    return true;
  }
  return false;
}

absl::Status Parser::RoutineRow(const std::vector<std::string_view>& t) {
  const std::string_view name = t[0];
  if (t.size() != 4) {
    return Fail(absl::StrCat(
        "routine table row ", Quote(name), " has ", t.size(),
        " fields, not 4 (name, #calls, avg. bytes, time(sec)): cut short?"));
  }
  if (name.find_first_not_of("0123456789.") == std::string_view::npos) {
    return FieldError("", "MPI Routine", name, "is a number, not a routine");
  }
  MpitraceRoutine r;
  r.name = std::string(name);
  Decimal avg;
  absl::Status status = Count(name, "#calls", t[1], kMaxCalls, &r.calls);
  if (status.ok())
    status = Number(name, "avg. bytes", t[2], kMaxAvgBytes, &avg);
  if (status.ok()) status = Seconds(name, "time(sec)", t[3], &r.time_ns);
  if (!status.ok()) return status;
  if (!Scaled(avg, r.calls, &r.bytes)) {
    return FieldError(name, "avg. bytes", t[2],
                      "times #calls overflows: an absurd value");
  }
  r.avg_bytes = ToDouble(avg);
  if (!routine_index_.try_emplace(r.name, profile_.routines.size()).second) {
    return Fail(
        absl::StrCat(Quote(name), " appears twice in the routine table"));
  }
  profile_.routines.push_back(std::move(r));
  return absl::OkStatus();
}

// "<routine>  #calls  avg. bytes  time(sec)" starts a routine's rows of
// "calls avg time".
absl::Status Parser::SizeLine(const std::vector<std::string_view>& t) {
  if (t.size() >= 2 && t[1] == "#calls") {
    auto it = routine_index_.find(t[0]);
    if (it == routine_index_.end()) {
      return Fail(absl::StrCat("a size distribution of ", Quote(t[0]),
                               ", which the routine table does not list"));
    }
    if (!distribution_line_.try_emplace(it->second, line_).second) {
      return Fail(absl::StrCat("a second size distribution of ", Quote(t[0])));
    }
    sizes_of_ = it->second;
    return absl::OkStatus();
  }
  if (!sizes_of_ ||
      t[0].find_first_not_of("0123456789-") != std::string_view::npos) {
    section_ = Section::kSkipped;  // something this reader does not know
    return absl::OkStatus();
  }
  const std::string& name = profile_.routines[*sizes_of_].name;
  if (t.size() != 3) {
    return Fail(absl::StrCat(name, ": size distribution row has ", t.size(),
                             " fields, not 3 (#calls, avg. bytes, "
                             "time(sec)): cut short?"));
  }
  MpitraceSizeBucket row;
  Decimal avg;
  absl::Status status = Count(name, "#calls", t[0], kMaxCalls, &row.calls);
  if (status.ok())
    status = Number(name, "avg. bytes", t[1], kMaxAvgBytes, &avg);
  if (status.ok()) status = Seconds(name, "time(sec)", t[2], &row.time_ns);
  if (!status.ok()) return status;
  if (!Scaled(avg, row.calls, &row.bytes)) {
    return FieldError(name, "avg. bytes", t[1],
                      "times #calls overflows: an absurd value");
  }
  row.log2 = BucketOf(avg);
  MpitraceSizeBucket& bucket = buckets_[*sizes_of_][row.log2];
  bucket.log2 = row.log2;
  // Sums of values under 10^15 calls, 2^63 bytes, a year: only bytes
  // can overflow.
  bucket.calls += row.calls;
  bucket.time_ns += row.time_ns;
  if (bucket.bytes > INT64_MAX - row.bytes) {
    return FieldError(name, "avg. bytes", t[1], "sums over 2^63 bytes");
  }
  bucket.bytes += row.bytes;
  return absl::OkStatus();
}

// "minimum communication time = X sec for task T" (and median, maximum).
absl::Status Parser::AllTasksLine(const std::vector<std::string_view>& t) {
  if (t.size() < 3 || t[1] != "communication" || t[2] != "time") {
    return absl::OkStatus();  // other lines of the summary
  }
  std::optional<int32_t>* out = t[0] == "minimum"   ? &profile_.min_comm_rank
                                : t[0] == "median"  ? &profile_.median_comm_rank
                                : t[0] == "maximum" ? &profile_.max_comm_rank
                                                    : nullptr;
  if (out == nullptr) return absl::OkStatus();
  if (t.size() != 9 || t[3] != "=" || t[7] != "task") {
    return Fail(absl::StrCat("expected \"", A(t[0]),
                             " communication time = X sec for task T\": cut "
                             "short?"));
  }
  int64_t ns = 0;
  int32_t rank = 0;
  absl::Status status = Seconds(t[0], "time", t[4], &ns);
  if (status.ok()) status = Rank(t[0], "task", t[8], &rank);
  if (status.ok()) *out = rank;
  return status;
}

// The header "taskid host cpu comm(s) elapsed(s) ..." names the columns.
absl::Status Parser::RankTableLine(const std::vector<std::string_view>& t) {
  if (rank_column_count_ == 0) {
    if (t[0] != "taskid") {
      return Fail(absl::StrCat(
          "expected the header \"taskid host ... comm(s) elapsed(s) ...\", "
          "found ",
          Quote(t[0])));
    }
    rank_columns_.clear();
    for (size_t i = 0; i < t.size(); ++i) {
      std::string name(t[i]);
      if (name == "hostname") name = "host";
      if (name == "size(MB)") name = "size(MiB)";
      rank_columns_.emplace(name, i);
    }
    for (const char* required : {"host", "comm(s)", "elapsed(s)"}) {
      if (!rank_columns_.count(required)) {
        return Fail(
            absl::StrCat("the rank table has no column \"", required, "\""));
      }
    }
    rank_column_count_ = t.size();
    return absl::OkStatus();
  }
  if (t[0].find_first_not_of("0123456789") != std::string_view::npos) {
    section_ = Section::kSkipped;  // the table is over
    return absl::OkStatus();
  }
  return RankTableRow(t);
}

absl::Status Parser::RankTableRow(const std::vector<std::string_view>& t) {
  if (t.size() != rank_column_count_) {
    return Fail(absl::StrCat("rank table row has ", t.size(),
                             " fields; its header has ", rank_column_count_,
                             ": cut short?"));
  }
  MpitraceRankTotals row;
  const std::string context = absl::StrCat("task ", A(t[0]));
  absl::Status status = Rank("", "taskid", t[0], &row.rank);
  if (!status.ok()) return status;
  row.host = std::string(t[rank_columns_["host"]]);
  status =
      Seconds(context, "comm(s)", t[rank_columns_["comm(s)"]], &row.comm_ns);
  if (status.ok()) {
    status = Seconds(context, "elapsed(s)", t[rank_columns_["elapsed(s)"]],
                     &row.elapsed_ns);
  }
  const std::pair<const char*, std::optional<int64_t>*> kOptional[] = {
      {"user(s)", &row.user_ns}, {"system(s)", &row.system_ns}};
  for (const auto& [column, out] : kOptional) {
    auto it = rank_columns_.find(column);
    if (!status.ok() || it == rank_columns_.end()) continue;
    int64_t ns = 0;
    status = Seconds(context, column, t[it->second], &ns);
    *out = ns;
  }
  auto rss = rank_columns_.find("size(MiB)");
  if (status.ok() && rss != rank_columns_.end()) {
    Decimal d;
    int64_t bytes = 0;
    status = Number(context, rss->first, t[rss->second],
                    kMaxRssBytes / kBytesPerMiB, &d);
    Scaled(d, kBytesPerMiB, &bytes);
    row.max_rss_bytes = bytes;
  }
  auto switches = rank_columns_.find("switches");
  if (status.ok() && switches != rank_columns_.end()) {
    int64_t count = 0;
    status = Count(context, "switches", t[switches->second], kMaxCalls, &count);
    row.context_switches = count;
  }
  if (!status.ok()) return status;
  for (const MpitraceRankTotals& other : profile_.ranks) {
    if (other.rank == row.rank) {
      return Fail(
          absl::StrCat("task ", row.rank, " appears twice in the rank table"));
    }
  }
  profile_.ranks.push_back(std::move(row));
  return absl::OkStatus();
}

absl::Status Parser::Line(std::string_view raw) {
  const std::string_view line = Trim(raw);
  const std::vector<std::string_view> t = Tokens(line);
  if (t.empty()) {
    // A blank line ends a routine's size rows and the rank table.
    sizes_of_.reset();
    if (section_ == Section::kRankTable && rank_column_count_ > 0) {
      section_ = Section::kSkipped;
    }
    return absl::OkStatus();
  }
  absl::Status status;
  if (Sentinel(line, t, &status)) return status;
  if (Dashes(line)) {
    // The routine table's header is underlined; the next dashes end it.
    if (section_ == Section::kRoutines) {
      if (profile_.routines.empty() && !table_underlined_) {
        table_underlined_ = true;
      } else {
        section_ = Section::kTotals;
      }
    }
    return absl::OkStatus();
  }
  switch (section_) {
    case Section::kRoutines:
      return RoutineRow(t);
    case Section::kSizes:
      return SizeLine(t);
    case Section::kAllTasks:
      return AllTasksLine(t);
    case Section::kRankTable:
      return RankTableLine(t);
    case Section::kTotals:
      return absl::OkStatus();  // e.g. "Rank 3 reported the largest ..."
    case Section::kPreamble: {
      // "Times from MPI_Init() to MPI_Finalize()." and variants.
      const size_t from = line.find(" from ");
      if (StartsWith(line, "Times ") && from != std::string_view::npos &&
          profile_.interval.empty()) {
        std::string_view interval = line.substr(from + 6);
        if (!interval.empty() && interval.back() == '.') {
          interval.remove_suffix(1);
        }
        profile_.interval = std::string(interval);
      }
      return absl::OkStatus();
    }
    case Section::kHead:
    case Section::kSkipped:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status Parser::Finish() {
  if (section_ == Section::kHead) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_,
        ": not an mpitrace profile: no \"Data for MPI rank R of N:\" "
        "line"));
  }
  if (!routine_table_) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_,
                     ": no routine table (\"MPI Routine  #calls  avg. bytes  "
                     "time(sec)\"): cut short?"));
  }
  for (auto& [index, by_log2] : buckets_) {
    MpitraceRoutine& r = profile_.routines[index];
    int64_t calls = 0;
    for (auto& [log2, bucket] : by_log2) {
      calls += bucket.calls;
      r.buckets.push_back(bucket);
    }
    if (calls != r.calls) {
      line_ = distribution_line_[index];
      return Fail(absl::StrCat("the size distribution of ", r.name, " counts ",
                               calls, " calls; the routine table says ",
                               r.calls, ": cut short?"));
    }
  }
  for (const MpitraceRankTotals& row : profile_.ranks) {
    if (row.rank == profile_.rank) profile_.host = row.host;
  }
  return absl::OkStatus();
}

absl::StatusOr<MpitraceProfile> Parser::Parse() {
  size_t begin = 0;
  while (begin < text_.size()) {
    size_t end = text_.find('\n', begin);
    if (end == std::string_view::npos) end = text_.size();
    ++line_;
    absl::Status status = Line(text_.substr(begin, end - begin));
    if (!status.ok()) return status;
    begin = end + 1;
  }
  absl::Status status = Finish();
  if (!status.ok()) return status;
  return std::move(profile_);
}

}  // namespace

bool LooksLikeMpitraceProfile(std::string_view head) {
  size_t begin = 0;
  while (begin < head.size()) {
    size_t end = head.find('\n', begin);
    if (end == std::string_view::npos) end = head.size();
    if (StartsWith(Trim(head.substr(begin, end - begin)),
                   "Data for MPI rank ")) {
      return true;
    }
    begin = end + 1;
  }
  return false;
}

absl::StatusOr<MpitraceProfile> ReadMpitraceProfile(std::string_view text,
                                                    const std::string& file) {
  Parser parser(text, file);
  return parser.Parse();
}

}  // namespace meridian
