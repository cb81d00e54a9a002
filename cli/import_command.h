// `meridian import`: trace files other tools wrote, sent to the collector
// over the normal ingest path (import/). Each file is read whole and
// checked before anything of it is sent; its batches are named by a hash
// of the job, the options and the file's content, so importing the same
// file again stores nothing twice. A file's batches are given up when the
// collector acknowledges none of them for --request-timeout
// (IngestClient's ack timeout): a large file takes as long as it needs
// while acknowledgements keep coming.
#ifndef MERIDIAN_CLI_IMPORT_COMMAND_H_
#define MERIDIAN_CLI_IMPORT_COMMAND_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/collector_call.h"
#include "grpcpp/grpcpp.h"

namespace meridian {

// `meridian import`'s flags (each file's reader gets ImportOptions from them).
struct ImportFlags {
  std::string job;
  std::string format;  // "" (detect), or a name import/trace_formats.h lists
  std::string node;    // "" : from the file, else its name
  int32_t rank = -1;   // file i's first process gets rank + i
  std::optional<int64_t> clock_offset_ns;  // node clock - collector clock
  std::optional<int64_t> epoch_ns;         // ts 0 of relative traces
  std::vector<std::string> paths;
  size_t max_file_bytes = size_t{8} << 30;
};

// Imports every file; says what it did per file on stderr. 0 if every file
// was imported (or had been before), 1 otherwise.
int ImportFiles(const std::shared_ptr<grpc::Channel>& channel,
                const CollectorTarget& collector, const ImportFlags& options);

}  // namespace meridian

#endif  // MERIDIAN_CLI_IMPORT_COMMAND_H_
