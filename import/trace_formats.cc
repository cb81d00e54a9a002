#include "import/trace_formats.h"

#include "absl/strings/str_cat.h"
#include "import/bluefog_timeline_reader.h"
#include "import/byteps_trace_reader.h"
#include "import/chrome_trace_reader.h"
#include "import/horovod_timeline_reader.h"
#include "import/mpitrace_profile_reader.h"
#include "import/mpitrace_totals.h"
#include "import/nsight_sqlite_reader.h"
#include "import/paths.h"
#include "import/timeline_format.h"

namespace meridian {
namespace {

constexpr const char* kFormats =
    "Chrome trace JSON, PyTorch profiler (Kineto), a Meridian export, "
    "Horovod, BytePS or Bluefog timelines, mpitrace profiles, Nsight "
    "Systems SQLite";

// How much of a file the fingerprints look at.
constexpr size_t kHeadBytes = 64 * 1024;

TimelineReadOptions TimelineOptions(const ImportReadOptions& o) {
  TimelineReadOptions t;
  t.file = o.file;
  t.node = o.node;
  t.rank = o.rank;
  t.epoch_ns = o.epoch_ns;
  t.fallback_end_ns = o.fallback_end_ns;
  return t;
}

}  // namespace

bool KnownImportFormat(const std::string& format) {
  for (const char* f : {"", "chrome", "kineto", "meridian", "horovod", "byteps",
                        "bluefog", "mpitrace", "nsight"}) {
    if (format == f) return true;
  }
  return false;
}

std::string DetectImportFormat(std::string_view content) {
  const std::string_view head = content.substr(0, kHeadBytes);
  if (LooksLikeSqlite(head)) return "nsight";
  if (LooksLikeMpitraceProfile(head)) return "mpitrace";
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos ||
      (head[first] != '{' && head[first] != '[')) {
    return "";
  }
  const std::string framework = DetectTimelineFormat(head);
  return framework.empty() ? "chrome" : framework;
}

absl::StatusOr<ImportedTrace> ReadImportFile(std::string content,
                                             const ImportReadOptions& options) {
  std::string format = options.format;
  // The Chrome reader's dialects are its own to tell apart.
  std::string dialect;
  if (format == "chrome" || format == "kineto" || format == "meridian") {
    dialect = format;
    format = "chrome";
  } else if (format.empty()) {
    format = DetectImportFormat(content);
  }
  if (format == "nsight") {
    NsightReadOptions n;
    n.file = options.file;
    n.node = options.node;
    n.rank = options.rank;
    n.epoch_ns = options.epoch_ns;
    n.fallback_end_ns = options.fallback_end_ns;
    return ReadNsightSqliteImage(content, n);
  }
  if (format == "mpitrace") {
    absl::StatusOr<MpitraceProfile> profile =
        ReadMpitraceProfile(content, options.file);
    if (!profile.ok()) return profile.status();
    return MpitraceTotals(*profile, options.node, PathBaseName(options.file),
                          options.rank);
  }
  if (format == "horovod") {
    return ReadHorovodTimeline(std::move(content), TimelineOptions(options));
  }
  if (format == "byteps") {
    return ReadBytePSTrace(std::move(content), TimelineOptions(options));
  }
  if (format == "bluefog") {
    return ReadBluefogTimeline(std::move(content), TimelineOptions(options));
  }
  if (format == "chrome") {
    ChromeReadOptions c;
    c.file = options.file;
    c.node = options.node;
    c.rank = options.rank;
    c.epoch_ns = options.epoch_ns;
    c.fallback_end_ns = options.fallback_end_ns;
    c.dialect = dialect;
    return ReadChromeTrace(std::move(content), c);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(options.file, ": not a format meridian import reads (",
                   kFormats, "); nothing imported"));
}

}  // namespace meridian
