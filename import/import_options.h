// ImportOptions: what `meridian import` tells a file's reader (its flags
// and the file's path), one struct for every format's reader
// (trace_formats.h dispatches). Each reader's header says how it uses them.
#ifndef MERIDIAN_IMPORT_IMPORT_OPTIONS_H_
#define MERIDIAN_IMPORT_IMPORT_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

namespace meridian {

struct ImportOptions {
  std::string file;   // the path: for messages, and what the path says
  std::string node;   // --node; "": from the file or its name
  int32_t rank = -1;  // --rank; -1: from the file or its path
  // --epoch-ns: what ts 0 is, for a file whose times are relative.
  std::optional<int64_t> epoch_ns;
  // Else relative times are placed to end here (the file's modification
  // time); 0: not placed (such times are then refused).
  int64_t fallback_end_ns = 0;
  // The format (--format): "" detects it. For the Chrome reader, one of its
  // dialects ("chrome", "kineto", "meridian") forces that dialect.
  std::string format;
};

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_IMPORT_OPTIONS_H_
