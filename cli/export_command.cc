#include "cli/export_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/output_file.h"
#include "import/paths.h"
#include "net/idle_deadline.h"

namespace meridian {
namespace {

// The most files one export writes.
constexpr uint64_t kMaxExportParts = 10000;

// `path` with `tag` before its extension: "t.json.gz" + ".steps-0-9" is
// "t.steps-0-9.json.gz"; a name without an extension gets it at the end.
std::string WithTag(const std::string& path, const std::string& tag) {
  const size_t slash = path.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = path.find('.', base + 1);
  if (dot == std::string::npos) return path + tag;
  return path.substr(0, dot) + tag + path.substr(dot);
}

// A job name as part of a file name: other characters become '_'.
std::string FileSafe(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');
  return out;
}

// The ranks the filter selects among the job's.
std::vector<int32_t> SelectedRanks(const v1::SpanFilter& filter,
                                   const v1::JobSummary& job) {
  std::vector<int32_t> ranks;
  for (int32_t rank : job.rank_ids()) {
    if (filter.ranks().empty() ||
        std::find(filter.ranks().begin(), filter.ranks().end(), rank) !=
            filter.ranks().end()) {
      ranks.push_back(rank);
    }
  }
  return ranks;
}

const char* Extension(v1::ExportFormat format) {
  switch (format) {
    case v1::EXPORT_FORMAT_PERFETTO:
      return ".pftrace";
    case v1::EXPORT_FORMAT_KINETO:
      return ".pt.trace.json";
    default:
      return ".json";
  }
}

absl::StatusOr<std::vector<ExportPart>> PerRank(const ExportOptions& options,
                                                v1::ExportFormat format,
                                                const v1::JobSummary& job) {
  std::vector<ExportPart> parts;
  for (int32_t rank : SelectedRanks(options.filter, job)) {
    ExportPart part;
    // TensorBoard's plugin reads WORKER.pt.trace.json and splits WORKER at
    // its last "_DIGITS"; HTA reads every .json file of the directory.
    const std::string name =
        format == v1::EXPORT_FORMAT_KINETO
            ? absl::StrCat(FileSafe(job.job()), "_", rank)
            : absl::StrCat(FileSafe(job.job()), "_rank_", rank);
    part.path =
        PathJoin(options.per_rank_dir, absl::StrCat(name, Extension(format)));
    part.filter = options.filter;
    part.filter.clear_ranks();
    part.filter.add_ranks(rank);
    parts.push_back(std::move(part));
  }
  if (parts.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job ", job.job(), " has no ranks",
        options.filter.ranks().empty() ? "" : " among those of --ranks"));
  }
  return parts;
}

absl::StatusOr<std::vector<ExportPart>> SplitBySteps(
    const ExportOptions& options, const v1::JobSummary& job) {
  if (!job.has_first_step()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job ", job.job(),
        " has no steps to split by (its spans carry none): use --split-by "
        "rank N"));
  }
  const v1::SpanFilter& f = options.filter;
  const int64_t first = f.has_first_step()
                            ? std::max(f.first_step(), job.first_step())
                            : job.first_step();
  const int64_t last = f.has_last_step()
                           ? std::min(f.last_step(), job.last_step())
                           : job.last_step();
  // Steps are numbered by the job (or a file it imported): a range too
  // wide to cut is refused rather than planned file by file.
  if (last >= first &&
      static_cast<uint64_t>(last - first) / options.split_every >=
          kMaxExportParts) {
    return absl::InvalidArgumentError(absl::StrCat(
        "steps ", first, "..", last, " in files of ", options.split_every,
        " would be more than ", kMaxExportParts,
        " files: give a larger N, or --steps A:B"));
  }
  std::vector<ExportPart> parts;
  for (int64_t a = first; a <= last;) {
    // b = min(last, a + N - 1), without overflow.
    const int64_t b =
        last - a < options.split_every ? last : a + options.split_every - 1;
    ExportPart part;
    part.path = WithTag(options.output, absl::StrCat(".steps-", a, "-", b));
    part.filter = f;
    part.filter.set_first_step(a);
    part.filter.set_last_step(b);
    parts.push_back(std::move(part));
    if (b == last) break;
    a = b + 1;
  }
  if (parts.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--steps selects none of job ", job.job(), "'s steps ",
                     job.first_step(), "..", job.last_step()));
  }
  return parts;
}

absl::StatusOr<std::vector<ExportPart>> SplitByRanks(
    const ExportOptions& options, const v1::JobSummary& job) {
  const std::vector<int32_t> ranks = SelectedRanks(options.filter, job);
  std::vector<ExportPart> parts;
  for (size_t i = 0; i < ranks.size();
       i += static_cast<size_t>(options.split_every)) {
    const size_t end =
        std::min(ranks.size(), i + static_cast<size_t>(options.split_every));
    ExportPart part;
    part.path = WithTag(options.output,
                        absl::StrCat(".ranks-", ranks[i], "-", ranks[end - 1]));
    part.filter = options.filter;
    part.filter.clear_ranks();
    for (size_t k = i; k < end; ++k) part.filter.add_ranks(ranks[k]);
    parts.push_back(std::move(part));
  }
  if (parts.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", job.job(), " has no ranks to split by"));
  }
  return parts;
}

// One file; 0 or 1.
int ExportPartTo(v1::Query::Stub& stub, const CollectorTarget& collector,
                 const ExportOptions& options, v1::ExportFormat format,
                 const ExportPart& part) {
  auto file = OutputFile::Create(part.path, "meridian export");
  if (!file.ok()) {
    fprintf(stderr, "meridian: export: %s\n",
            std::string(file.status().message()).c_str());
    return 1;
  }
  grpc::ClientContext context;
  v1::ExportRequest request;
  *request.mutable_filter() = part.filter;
  request.set_raw_clock(options.raw_clock);
  request.set_critical_path(options.critical_path);
  request.set_format(format);
  grpc::Status status;
  absl::Status written;
  bool silent;
  {
    IdleDeadline idle(&context, collector.request_timeout());
    auto reader = stub.ExportTrace(&context, request);
    v1::TraceChunk chunk;
    while (written.ok() && reader->Read(&chunk)) {
      idle.Progress();
      written = (*file)->Write(chunk.data());
    }
    if (!written.ok()) context.TryCancel();
    status = reader->Finish();
    silent = idle.expired();
  }
  if (!written.ok()) {
    fprintf(stderr, "meridian: export: %s\n",
            std::string(written.message()).c_str());
    return 1;
  }
  if (!status.ok()) return CallFailed("export", status, collector, silent);
  if (absl::Status s = (*file)->Commit(); !s.ok()) {
    fprintf(stderr, "meridian: export: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  if ((*file)->gzip()) {
    printf("wrote %s (%lld bytes, %lld before gzip)\n", part.path.c_str(),
           static_cast<long long>((*file)->bytes_out()),
           static_cast<long long>((*file)->bytes_in()));
  } else {
    printf("wrote %s (%lld bytes)\n", part.path.c_str(),
           static_cast<long long>((*file)->bytes_out()));
  }
  return 0;
}

}  // namespace

absl::StatusOr<v1::ExportFormat> ExportFormatOf(const ExportOptions& options) {
  if (options.format == "chrome") return v1::EXPORT_FORMAT_CHROME;
  if (options.format == "perfetto") return v1::EXPORT_FORMAT_PERFETTO;
  if (options.format == "kineto") return v1::EXPORT_FORMAT_KINETO;
  if (!options.format.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown export format \"", options.format,
                     "\"; use chrome, perfetto or kineto"));
  }
  std::string name = options.output;
  if (absl::EndsWith(name, ".gz")) name.resize(name.size() - 3);
  if (absl::EndsWith(name, ".pftrace") ||
      absl::EndsWith(name, ".perfetto-trace")) {
    return v1::EXPORT_FORMAT_PERFETTO;
  }
  return v1::EXPORT_FORMAT_CHROME;
}

absl::StatusOr<std::vector<ExportPart>> PlanExport(const ExportOptions& options,
                                                   v1::ExportFormat format,
                                                   const v1::JobSummary& job) {
  const bool per_rank = !options.per_rank_dir.empty();
  if (per_rank == !options.output.empty()) {
    return absl::InvalidArgumentError(
        per_rank ? "give -o FILE or --per-rank DIR, not both"
                 : "export needs -o FILE (or --per-rank DIR)");
  }
  if (!options.split_by.empty() && options.split_by != "step" &&
      options.split_by != "rank") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--split-by takes step or rank, not \"", options.split_by, "\""));
  }
  if (!options.split_by.empty() && options.split_every < 1) {
    return absl::InvalidArgumentError(
        "--split-by needs a count: --split-by step 10, --split-by rank 8");
  }
  if (per_rank && !options.split_by.empty()) {
    return absl::InvalidArgumentError(
        "--per-rank already splits by rank: drop --split-by");
  }
  if (per_rank) return PerRank(options, format, job);
  if (options.split_by == "step") return SplitBySteps(options, job);
  if (options.split_by == "rank") {
    if (format == v1::EXPORT_FORMAT_KINETO && options.split_every != 1) {
      return absl::InvalidArgumentError(
          "a kineto file holds one rank: use --per-rank DIR");
    }
    return SplitByRanks(options, job);
  }
  if (format == v1::EXPORT_FORMAT_KINETO &&
      SelectedRanks(options.filter, job).size() != 1) {
    return absl::InvalidArgumentError(
        "a kineto file holds one rank: use --per-rank DIR, or --ranks N");
  }
  return std::vector<ExportPart>{{options.output, options.filter}};
}

int ExportJob(v1::Query::Stub& stub, const CollectorTarget& collector,
              const ExportOptions& options) {
  absl::StatusOr<v1::ExportFormat> format = ExportFormatOf(options);
  if (!format.ok()) {
    fprintf(stderr, "meridian: export: %s\n",
            std::string(format.status().message()).c_str());
    return 2;
  }
  // The job's ranks and steps, which the files are cut by.
  grpc::ClientContext context;
  SetRequestDeadline(collector, &context);
  v1::ListJobsRequest request;
  request.set_job(options.filter.job());
  v1::ListJobsReply reply;
  const grpc::Status status = stub.ListJobs(&context, request, &reply);
  if (!status.ok()) return CallFailed("export", status, collector);
  if (reply.jobs_size() != 1) {
    fprintf(stderr, "meridian: export: the collector did not describe job %s\n",
            options.filter.job().c_str());
    return 1;
  }
  absl::StatusOr<std::vector<ExportPart>> parts =
      PlanExport(options, *format, reply.jobs(0));
  if (!parts.ok()) {
    fprintf(stderr, "meridian: export: %s\n",
            std::string(parts.status().message()).c_str());
    return 2;
  }
  if (!options.per_rank_dir.empty()) {
    struct stat st;
    if (stat(options.per_rank_dir.c_str(), &st) != 0) {
      if (mkdir(options.per_rank_dir.c_str(), 0755) != 0) {
        fprintf(stderr, "meridian: export: cannot create directory %s\n",
                options.per_rank_dir.c_str());
        return 1;
      }
    } else if (!S_ISDIR(st.st_mode)) {
      fprintf(stderr, "meridian: export: %s is not a directory\n",
              options.per_rank_dir.c_str());
      return 2;
    }
  }
  for (const ExportPart& part : *parts) {
    if (ExportPartTo(stub, collector, options, *format, part) != 0) return 1;
  }
  if (parts->size() == 1 && *format != v1::EXPORT_FORMAT_KINETO) {
    printf("the merged trace of job %s; open it in https://ui.perfetto.dev%s\n",
           options.filter.job().c_str(),
           *format == v1::EXPORT_FORMAT_CHROME ? " or chrome://tracing" : "");
  } else {
    printf("%zu files of job %s\n", parts->size(),
           options.filter.job().c_str());
  }
  return 0;
}

}  // namespace meridian
