// What `meridian import` reads, told apart by content (--format forces
// one), and the reader each format goes to:
//   "nsight"    an Nsight Systems SQLite export (SQLite's magic)
//   "mpitrace"  an IBM mpitrace text profile ("Data for MPI rank ...")
//   "horovod", "byteps", "bluefog"  the frameworks' JSON timelines
//               (timeline_format.h fingerprints)
//   "chrome", "kineto", "meridian"  any other JSON trace: the Chrome
//               reader, which tells its dialects apart itself
// Anything else is refused, saying which formats there are.
#ifndef MERIDIAN_IMPORT_TRACE_FORMATS_H_
#define MERIDIAN_IMPORT_TRACE_FORMATS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "import/import_options.h"
#include "import/imported_trace.h"

namespace meridian {

// Whether --format takes `format` ("" too: detect).
bool KnownImportFormat(const std::string& format);

// The format of a file from its content: one of the names above, or "" if
// none ("chrome" stands for every JSON trace the Chrome reader takes).
std::string DetectImportFormat(std::string_view content);

// Reads a whole file's content in its format; INVALID_ARGUMENT naming the
// file and saying what is wrong (for a file of no known format: which
// formats there are).
absl::StatusOr<ImportedTrace> ReadImportFile(std::string content,
                                             const ImportOptions& options);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_TRACE_FORMATS_H_
