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

// How much of a file the fingerprints look at.
constexpr size_t kHeadBytes = 64 * 1024;

// The formats `meridian import` reads: each name --format takes, what it
// is (for messages), and its reader. The Chrome reader's dialects are its
// own to tell apart: it gets the name given, or "" to detect.
struct ImportFormat {
  const char* name;
  const char* what;
  absl::StatusOr<ImportedTrace> (*read)(std::string content,
                                        const ImportOptions& options);
};

absl::StatusOr<ImportedTrace> ReadMpitrace(std::string content,
                                           const ImportOptions& options) {
  absl::StatusOr<MpitraceProfile> profile =
      ReadMpitraceProfile(content, options.file);
  if (!profile.ok()) return profile.status();
  return MpitraceTotals(*profile, options.node, PathBaseName(options.file),
                        options.rank);
}
absl::StatusOr<ImportedTrace> ReadNsight(std::string content,
                                         const ImportOptions& options) {
  return ReadNsightSqliteImage(content, options);
}

constexpr ImportFormat kImportFormats[] = {
    {"chrome", "Chrome trace JSON", ReadChromeTrace},
    {"kineto", "PyTorch profiler (Kineto)", ReadChromeTrace},
    {"meridian", "a Meridian export", ReadChromeTrace},
    {"horovod", "Horovod timelines", ReadHorovodTimeline},
    {"byteps", "BytePS traces", ReadBytePSTrace},
    {"bluefog", "Bluefog timelines", ReadBluefogTimeline},
    {"mpitrace", "mpitrace profiles", ReadMpitrace},
    {"nsight", "Nsight Systems SQLite", ReadNsight},
};

const ImportFormat* FormatNamed(const std::string& name) {
  for (const ImportFormat& f : kImportFormats) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

// "Chrome trace JSON, ..., Nsight Systems SQLite": what import reads.
std::string FormatsRead() {
  std::string out;
  for (const ImportFormat& f : kImportFormats) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", f.what);
  }
  return out;
}

}  // namespace

bool KnownImportFormat(const std::string& format) {
  return format.empty() || FormatNamed(format) != nullptr;
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
  const ImportFormat* format = FormatNamed(
      options.format.empty() ? DetectImportFormat(content) : options.format);
  if (format == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.file, ": not a format meridian import reads (",
                     FormatsRead(), "); nothing imported"));
  }
  return format->read(std::move(content), options);
}

}  // namespace meridian
