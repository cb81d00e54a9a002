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
                                             const ImportOptions& options) {
  std::string format = options.format;
  // The Chrome reader's dialects are its own to tell apart.
  std::string dialect;
  if (format == "chrome" || format == "kineto" || format == "meridian") {
    dialect = format;
    format = "chrome";
  } else if (format.empty()) {
    format = DetectImportFormat(content);
  }
  if (format == "nsight") return ReadNsightSqliteImage(content, options);
  if (format == "mpitrace") {
    absl::StatusOr<MpitraceProfile> profile =
        ReadMpitraceProfile(content, options.file);
    if (!profile.ok()) return profile.status();
    return MpitraceTotals(*profile, options.node, PathBaseName(options.file),
                          options.rank);
  }
  if (format == "horovod") {
    return ReadHorovodTimeline(std::move(content), options);
  }
  if (format == "byteps") {
    return ReadBytePSTrace(std::move(content), options);
  }
  if (format == "bluefog") {
    return ReadBluefogTimeline(std::move(content), options);
  }
  if (format == "chrome") {
    ImportOptions chrome = options;
    chrome.format = dialect;  // forced, or "": the reader detects it
    return ReadChromeTrace(std::move(content), chrome);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(options.file, ": not a format meridian import reads (",
                   kFormats, "); nothing imported"));
}

}  // namespace meridian
