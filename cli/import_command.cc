#include "cli/import_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/crc32c.h"
#include "import/imported_trace.h"
#include "import/input_file.h"
#include "import/mpitrace_profile_reader.h"
#include "import/mpitrace_totals.h"
#include "import/paths.h"
#include "import/trace_formats.h"
#include "wire/ingest_client.h"

namespace meridian {
namespace {

// 64-bit FNV-1a.
uint64_t Fnv1a(std::string_view data, uint64_t hash = 0xcbf29ce484222325ull) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// A file's content hashed once, before the reader takes it: 96 bits.
struct ContentHash {
  uint64_t fnv;
  uint32_t crc;
};

// The import's agent id: the same file with the same options gives the
// same id, so its batches are stored once however often it is imported.
// FNV-1a 64 and CRC-32C of the content, then of the job and options.
std::string ImportAgentId(const ImportFlags& options, int32_t rank,
                          const std::string& format, ContentHash content) {
  const std::string head = absl::StrCat(
      options.job, "\x1f", format, "\x1f", options.node, "\x1f", rank, "\x1f",
      options.clock_offset_ns ? absl::StrCat(*options.clock_offset_ns) : "-",
      "\x1f", options.epoch_ns ? absl::StrCat(*options.epoch_ns) : "-", "\x1f");
  return absl::StrFormat("import-%016x%08x", Fnv1a(head, content.fnv),
                         Crc32c(head, content.crc));
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

// An mpitrace profile read, sent once every profile of the import is
// read: rank 0's table names the hosts of the ranks whose own files do
// not.
struct ReadProfile {
  std::string path;
  int32_t rank;
  ContentHash content;
  MpitraceProfile profile;
  std::chrono::steady_clock::time_point began;
};

bool SendTrace(IngestClient& client, const SendOptions& send,
               const ImportFlags& options, const std::string& path,
               int32_t rank, ContentHash content, ImportedTrace& trace,
               std::chrono::steady_clock::time_point began);

// One file; false (having said why) if it was not imported. An mpitrace
// profile is read into `profiles`, to be sent with the others.
bool ImportOne(IngestClient& client, const SendOptions& send,
               const ImportFlags& options, const std::string& path,
               int32_t rank, std::vector<ReadProfile>* profiles) {
  const auto began = std::chrono::steady_clock::now();
  const bool terminal = isatty(2);
  absl::StatusOr<InputFile> file = ReadInputFile(path, options.max_file_bytes);
  if (!file.ok()) {
    fprintf(stderr, "meridian import: %s\n",
            std::string(file.status().message()).c_str());
    return false;
  }
  if (terminal) {
    const double seconds = std::max(1e-6, Seconds(began));
    fprintf(
        stderr, "meridian import: %s: read %.1f MB%s in %.2f s (%.1f MB/s)\n",
        path.c_str(), file->content.size() / 1e6, file->gzip ? " (gzip)" : "",
        seconds, file->content.size() / 1e6 / seconds);
  }
  ImportOptions read;
  read.file = path;
  read.format = options.format;
  read.node = options.node;
  read.rank = rank;
  read.epoch_ns = options.epoch_ns;
  read.fallback_end_ns = file->mtime_ns;
  const ContentHash content{Fnv1a(file->content), Crc32c(file->content)};
  const std::string format = options.format.empty()
                                 ? DetectImportFormat(file->content)
                                 : options.format;
  if (format == "mpitrace") {
    absl::StatusOr<MpitraceProfile> profile =
        ReadMpitraceProfile(file->content, path);
    if (!profile.ok()) {
      fprintf(stderr, "meridian import: %s\n",
              std::string(profile.status().message()).c_str());
      return false;
    }
    profiles->push_back({path, rank, content, std::move(*profile), began});
    return true;
  }
  absl::StatusOr<ImportedTrace> trace =
      ReadImportFile(std::move(file->content), read);
  if (!trace.ok()) {
    fprintf(stderr, "meridian import: %s\n",
            std::string(trace.status().message()).c_str());
    return false;
  }
  return SendTrace(client, send, options, path, rank, content, *trace, began);
}

// The profiles read, each sent with what the others say of its rank.
int ImportProfiles(IngestClient& client, const SendOptions& send,
                   const ImportFlags& options,
                   const std::vector<ReadProfile>& profiles) {
  std::vector<const MpitraceProfile*> all;
  for (const ReadProfile& p : profiles) all.push_back(&p.profile);
  const MpitraceRun run = MpitraceRunOf(all);
  int failed = 0;
  for (const ReadProfile& p : profiles) {
    ImportedTrace trace = MpitraceTotals(p.profile, options.node,
                                         PathBaseName(p.path), p.rank, &run);
    // The same file sent with other hosts or rows (another set of files)
    // is another import.
    ContentHash content = p.content;
    for (const ProcessDesc& process : trace.processes) {
      const std::string said = absl::StrCat(process.rank, "@", process.node);
      content.fnv = Fnv1a(said, content.fnv);
      content.crc = Crc32c(said, content.crc);
    }
    if (!SendTrace(client, send, options, p.path, p.rank, content, trace,
                   p.began)) {
      ++failed;
    }
  }
  return failed;
}

bool SendTrace(IngestClient& client, const SendOptions& send,
               const ImportFlags& options, const std::string& path,
               int32_t rank, ContentHash content, ImportedTrace& trace,
               std::chrono::steady_clock::time_point began) {
  const bool terminal = isatty(2);
  for (ProcessDesc& p : trace.processes) {
    p.job = options.job;
    if (options.clock_offset_ns && p.node != trace.processes[0].node) {
      fprintf(stderr,
              "meridian import: %s: --clock-offset-ns is one node's offset, "
              "and this file holds several nodes (%s, %s, ...): import it "
              "without, or with --node; nothing imported\n",
              path.c_str(), trace.processes[0].node.c_str(), p.node.c_str());
      return false;
    }
  }
  for (const std::string& note : trace.notes) {
    fprintf(stderr, "meridian import: %s: %s\n", path.c_str(), note.c_str());
  }
  const bool totals = !trace.op_totals.empty() || !trace.process_totals.empty();
  if (trace.spans.empty() && !totals) {
    fprintf(stderr, "meridian import: %s: no spans in it; nothing imported\n",
            path.c_str());
    return false;
  }
  const std::string agent_id =
      ImportAgentId(options, rank, trace.format, content);
  const std::vector<v1::Batch> batches =
      ToBatches(trace, agent_id, options.clock_offset_ns);
  if (terminal) {
    const double seconds = std::max(1e-6, Seconds(began));
    fprintf(stderr,
            "meridian import: %s: parsed %zu spans in %.2f s (%.0f spans/s); "
            "sending %zu batches\n",
            path.c_str(), trace.spans.size(), seconds,
            trace.spans.size() / seconds, batches.size());
  }
  absl::StatusOr<SendReport> report = client.SendAll(batches, send);
  if (!report.ok()) {
    // Refused for good (the token, the scope): again would be refused too.
    const bool refused = IsPermanentRefusal(report.status().code());
    fprintf(
        stderr, "meridian import: %s: %s%s%s\n", path.c_str(),
        std::string(report.status().message()).c_str(),
        absl::IsDeadlineExceeded(report.status()) ? " (--request-timeout)" : "",
        refused ? ""
                : "; importing it again completes it (nothing is stored "
                  "twice)");
    return false;
  }
  if (report->rejected > 0) {
    fprintf(stderr,
            "meridian import: %s: the collector refused %lld of %zu "
            "batches: %s\n",
            path.c_str(), static_cast<long long>(report->rejected),
            batches.size(),
            report->rejections.empty() ? "" : report->rejections[0].c_str());
    return false;
  }
  std::string ranks;
  for (const ProcessDesc& p : trace.processes) {
    absl::StrAppend(&ranks, ranks.empty() ? "" : ",", p.rank);
  }
  const double seconds = Seconds(began);
  if (report->stored == 0) {
    fprintf(stderr,
            "meridian import: %s: already imported into job %s (%zu spans "
            "stored before; nothing stored twice)\n",
            path.c_str(), options.job.c_str(), trace.spans.size());
  } else if (trace.spans.empty()) {
    fprintf(stderr,
            "meridian import: %s: statistics of %zu operation%s and %zu "
            "process%s of rank%s %s (node %s, %s) into job %s; meridian "
            "stats shows them\n",
            path.c_str(), trace.op_totals.size(),
            trace.op_totals.size() == 1 ? "" : "s", trace.process_totals.size(),
            trace.process_totals.size() == 1 ? "" : "es",
            trace.processes.size() > 1 ? "s" : "", ranks.c_str(),
            trace.processes[0].node.c_str(), trace.format.c_str(),
            options.job.c_str());
  } else {
    fprintf(stderr,
            "meridian import: %s: %zu spans of rank%s %s (node %s, %s) into "
            "job %s in %.2f s (%.0f spans/s)\n",
            path.c_str(), trace.spans.size(),
            trace.processes.size() > 1 ? "s" : "", ranks.c_str(),
            trace.processes[0].node.c_str(), trace.format.c_str(),
            options.job.c_str(), seconds, trace.spans.size() / seconds);
  }
  if (report->spans_invalid > 0) {
    fprintf(stderr,
            "meridian import: %s: the collector dropped %lld invalid "
            "spans (%s)\n",
            path.c_str(), static_cast<long long>(report->spans_invalid),
            report->invalid_reasons.empty()
                ? ""
                : report->invalid_reasons[0].c_str());
  }
  return true;
}

}  // namespace

int ImportFiles(const std::shared_ptr<grpc::Channel>& channel,
                const CollectorTarget& collector, const ImportFlags& options) {
  absl::StatusOr<std::vector<std::string>> paths = ExpandPaths(options.paths);
  if (!paths.ok()) {
    fprintf(stderr, "meridian import: %s\n",
            std::string(paths.status().message()).c_str());
    return 1;
  }
  IngestClient client(channel);
  SendOptions send;
  send.ack_timeout = collector.request_timeout();
  int failed = 0;
  std::vector<ReadProfile> profiles;
  for (size_t i = 0; i < paths->size(); ++i) {
    const int32_t rank =
        options.rank >= 0 ? options.rank + static_cast<int32_t>(i) : -1;
    if (!ImportOne(client, send, options, (*paths)[i], rank, &profiles)) {
      ++failed;
    }
  }
  failed += ImportProfiles(client, send, options, profiles);
  if (failed > 0) {
    fprintf(stderr, "meridian import: %d of %zu files not imported (%s)\n",
            failed, paths->size(), collector.address.c_str());
    return 1;
  }
  return 0;
}

}  // namespace meridian
