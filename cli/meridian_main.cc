// meridian: the command-line client of a Meridian collector. See docs/cli.md.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/analysis_report.h"
#include "cli/clocks_report.h"
#include "cli/export_command.h"
#include "cli/filter_flags.h"
#include "cli/import_command.h"
#include "cli/run_command.h"
#include "cli/stats_report.h"
#include "common/client_channel.h"
#include "common/command_line.h"
#include "grpcpp/grpcpp.h"
#include "import/trace_formats.h"
#include "meridian/v1/control.grpc.pb.h"
#include "meridian/v1/query.grpc.pb.h"

namespace {

constexpr char kUsage[] =
    R"(usage: meridian [--collector HOST:PORT] COMMAND [flags]

Commands:
  jobs                      the jobs stored: ranks, nodes, spans, time range
  delete --job J            delete the job from the store (its spans,
                            processes and tracks)
  export --job J -o FILE[.gz] [--format chrome|perfetto|kineto]
         [--per-rank DIR] [--split-by step|rank N]
                            the merged trace: Chrome JSON (chrome://tracing,
                            Perfetto UI), Perfetto protobuf (FILE.pftrace),
                            PyTorch profiler JSON per rank (HTA,
                            TensorBoard); .gz compresses; see
                            docs/import-export.md
  stats --job J [--json]    mpitrace-style communication statistics
  clocks --job J [--json]   each node's clock offset, drift, uncertainty and
                            causal correction; violations before and after
  critical-path --job J [--step N] [--json]
                            what bounds the step (or job) time: the longest
                            path across ranks, with its breakdown
  stragglers --job J [--head N] [--json]
                            arrival skew per collective (most skewed N,
                            default 20); the ranks others waited for most
  steps --job J [--json]    iteration time per step and rank; compute,
                            communication and their overlap
  compare --job A --job B | --job A --ranks R1,R2
          [--sort time|count|bytes|name] [--head N] [--json]
                            per operation: count, time and bytes, B - A
  graph --job J --step N -o FILE [--format dot|graphml]
                            the step's dependency graph (format from the
                            file name's .dot or .graphml, else dot)
  import --job J [--format F] [--rank N] [--node NAME] [--clock-offset-ns X]
         [--epoch-ns T] PATH...
                            trace files of other tools (Chrome JSON, PyTorch
                            profiler/Kineto, a Meridian export, Horovod,
                            BytePS and Bluefog timelines, mpitrace profiles,
                            Nsight Systems SQLite; files, directories, .gz)
                            into the job; see docs/import-export.md
  run [--job J] [--on-demand] [--flush-timeout S] -- CMD...
                            run CMD traced (works around or inside mpirun)
  trace --job J --steps N | --seconds S [--timeout S] [--local]
                            make the job's processes on every node record
                            the next N steps (or S seconds), through the
                            collector and each node's agent (answers within
                            --timeout, default 10 s); --local: only this
                            node's, from its agent; see --on-demand

export shows every node on the collector's clock (docs/clocks.md);
--raw-clock shows the nodes' raw timestamps instead. export --critical-path
adds a "critical path" track: of step N with --steps N, else of the job.
The analyses are explained in docs/analysis.md.

Filters (export and stats):
  --ranks 0,2-5  --category mpi,nccl,cuda_kernel,...,user  --name GLOB
  --from T --to T (since the job's first span: 1.5s, 250ms, 10us, 100ns)
  --steps A:B

--collector defaults to $MERIDIAN_COLLECTOR, else 127.0.0.1:7070.
)";

int Usage(const std::string& error) {
  fprintf(stderr, "meridian: %s\n\n%s", error.c_str(), kUsage);
  return 2;
}

// A channel to the collector with the TLS and token settings of the
// environment (MERIDIAN_TLS_CA, MERIDIAN_TOKEN, ...: common/client_channel.h);
// exits with status 2 and the reason if they cannot be used.
std::shared_ptr<grpc::Channel> CollectorChannel(const std::string& collector) {
  meridian::ClientSecurity security;
  absl::Status status = meridian::AddSecurityFromEnvironment(&security);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      status.ok() ? meridian::ClientChannel(collector, security)
                  : absl::StatusOr<std::shared_ptr<grpc::Channel>>(status);
  if (!channel.ok()) {
    fprintf(stderr, "meridian: %s\n",
            std::string(channel.status().message()).c_str());
    exit(2);
  }
  return *channel;
}

int RpcFailed(const char* what, const grpc::Status& status,
              const std::string& collector) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    fprintf(stderr,
            "meridian: %s: cannot reach the collector at %s (%s); is "
            "meridian-collector running there? (--collector HOST:PORT)\n",
            what, collector.c_str(), status.error_message().c_str());
  } else {
    fprintf(stderr, "meridian: %s: %s\n", what, status.error_message().c_str());
  }
  return 1;
}

std::string Utc(int64_t ns) {
  time_t seconds = ns / 1000000000;
  struct tm tm;
  gmtime_r(&seconds, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return absl::StrFormat("%s.%03dZ", buf, (ns / 1000000) % 1000);
}

int Jobs(meridian::v1::Query::Stub& stub, const std::string& collector) {
  grpc::ClientContext context;
  meridian::v1::ListJobsReply reply;
  grpc::Status status =
      stub.ListJobs(&context, meridian::v1::ListJobsRequest(), &reply);
  if (!status.ok()) return RpcFailed("jobs", status, collector);
  if (reply.jobs_size() == 0) {
    printf("no jobs stored yet\n");
    return 0;
  }
  printf("%-24s %6s %6s %12s  %-24s %12s\n", "JOB", "RANKS", "NODES", "SPANS",
         "START (UTC)", "DURATION(s)");
  for (const auto& job : reply.jobs()) {
    printf("%-24s %6d %6d %12lld  %-24s %12.6f\n", job.job().c_str(),
           job.ranks(), job.nodes(), static_cast<long long>(job.spans()),
           job.spans() > 0 ? Utc(job.start_ns()).c_str() : "-",
           (job.end_ns() - job.start_ns()) / 1e9);
  }
  return 0;
}

// Writes a streamed reply to `output`, beside it first and renamed at the
// end: never a partial file. Returns the bytes written, or -1 after saying
// why not.
template <typename Reader>
int64_t WriteStream(const char* what, Reader& reader,
                    grpc::ClientContext& context, const std::string& output,
                    const std::string& collector) {
  const std::string partial = output + ".partial";
  std::ofstream file(partial, std::ios::binary | std::ios::trunc);
  if (!file) {
    fprintf(stderr, "meridian: %s: cannot write %s\n", what, partial.c_str());
    context.TryCancel();
    reader->Finish();
    return -1;
  }
  meridian::v1::TraceChunk chunk;
  int64_t bytes = 0;
  while (reader->Read(&chunk)) {
    file.write(chunk.data().data(), chunk.data().size());
    bytes += chunk.data().size();
  }
  grpc::Status status = reader->Finish();
  file.close();
  if (!status.ok() || !file) {
    std::remove(partial.c_str());
    if (!status.ok()) {
      RpcFailed(what, status, collector);
    } else {
      fprintf(stderr, "meridian: %s: writing %s failed\n", what,
              partial.c_str());
    }
    return -1;
  }
  if (std::rename(partial.c_str(), output.c_str()) != 0) {
    fprintf(stderr, "meridian: %s: cannot rename %s to %s\n", what,
            partial.c_str(), output.c_str());
    return -1;
  }
  return bytes;
}

// `meridian trace` through the collector: every live agent applies the
// order to its processes of the job; prints what each node reported.
int TraceJob(const std::string& collector, const std::string& job,
             uint32_t steps, uint32_t seconds, uint32_t timeout_s) {
  auto stub = meridian::v1::Control::NewStub(CollectorChannel(collector));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(timeout_s + 10));
  meridian::v1::TraceRequest request;
  request.set_job(job);
  request.set_steps(steps);
  request.set_seconds(seconds);
  request.set_timeout_ms(timeout_s * 1000);
  meridian::v1::TraceReply reply;
  grpc::Status status = stub->RequestTrace(&context, request, &reply);
  if (!status.ok()) {
    RpcFailed("trace", status, collector);
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      fprintf(stderr,
              "meridian: trace: --local asks this node's agent alone\n");
    }
    return 1;
  }
  uint32_t processes = 0, nodes = 0;
  for (const auto& node : reply.nodes()) {
    processes += node.processes();
    nodes += node.processes() > 0;
  }
  if (reply.unanswered() > 0) {
    fprintf(stderr,
            "meridian: trace: %u agents did not answer within %u s; their "
            "processes may still start recording\n",
            reply.unanswered(), timeout_s);
  }
  if (processes == 0) {
    fprintf(stderr,
            "meridian: trace: no process of job %s on the %d agents that "
            "answered\n",
            job.c_str(), reply.nodes_size());
    return 1;
  }
  printf("meridian trace: %u processes of job %s on %u nodes will record ",
         processes, job.c_str(), nodes);
  if (steps > 0) {
    printf("the next %u steps\n", steps);
  } else {
    printf("for %u seconds\n", seconds);
  }
  for (const auto& node : reply.nodes()) {
    if (node.processes() > 0) {
      printf("  %s: %u processes\n", node.node().c_str(), node.processes());
    }
  }
  return 0;
}

// Calls a unary Query RPC and prints its reply as text, or as JSON.
template <typename Request, typename Reply>
int CallAndPrint(const char* what, meridian::v1::Query::Stub& stub,
                 grpc::Status (meridian::v1::Query::Stub::*rpc)(
                     grpc::ClientContext*, const Request&, Reply*),
                 const Request& request, const std::string& collector,
                 bool json, std::string (*as_json)(const Reply&),
                 std::string (*as_text)(const Reply&)) {
  grpc::ClientContext context;
  Reply reply;
  grpc::Status status = (stub.*rpc)(&context, request, &reply);
  if (!status.ok()) return RpcFailed(what, status, collector);
  const std::string out = json ? as_json(reply) : as_text(reply);
  fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int Clocks(meridian::v1::Query::Stub& stub, const std::string& collector,
           const std::string& job, bool json) {
  meridian::v1::ClocksRequest request;
  request.set_job(job);
  return CallAndPrint("clocks", stub, &meridian::v1::Query::Stub::GetClocks,
                      request, collector, json, meridian::ClocksJson,
                      meridian::ClocksText);
}

int Stats(meridian::v1::Query::Stub& stub, const std::string& collector,
          const meridian::v1::SpanFilter& filter, bool json) {
  meridian::v1::StatsRequest request;
  *request.mutable_filter() = filter;
  return CallAndPrint("stats", stub, &meridian::v1::Query::Stub::GetStats,
                      request, collector, json, meridian::StatsJson,
                      meridian::StatsText);
}

int CriticalPath(meridian::v1::Query::Stub& stub, const std::string& collector,
                 const meridian::CommandLine& line) {
  meridian::v1::CriticalPathRequest request;
  request.set_job(line.Get("job"));
  if (line.Has("step")) {
    auto step = line.GetInt("step", 0);
    if (!step.ok()) return Usage(std::string(step.status().message()));
    request.set_step(*step);
  }
  return CallAndPrint("critical-path", stub,
                      &meridian::v1::Query::Stub::GetCriticalPath, request,
                      collector, line.Has("json"), meridian::CriticalPathJson,
                      meridian::CriticalPathText);
}

int Stragglers(meridian::v1::Query::Stub& stub, const std::string& collector,
               const meridian::CommandLine& line) {
  auto head = line.GetInt("head", 20);
  if (!head.ok() || *head < 0 || *head > INT32_MAX) {
    return Usage("--head must be a count >= 0 (0: all)");
  }
  meridian::v1::StragglersRequest request;
  request.set_job(line.Get("job"));
  request.set_head(static_cast<int32_t>(*head));
  return CallAndPrint("stragglers", stub,
                      &meridian::v1::Query::Stub::GetStragglers, request,
                      collector, line.Has("json"), meridian::StragglersJson,
                      meridian::StragglersText);
}

int Steps(meridian::v1::Query::Stub& stub, const std::string& collector,
          const meridian::CommandLine& line) {
  meridian::v1::StepsRequest request;
  request.set_job(line.Get("job"));
  return CallAndPrint("steps", stub, &meridian::v1::Query::Stub::GetSteps,
                      request, collector, line.Has("json"), meridian::StepsJson,
                      meridian::StepsText);
}

int Compare(meridian::v1::Query::Stub& stub, const std::string& collector,
            const meridian::CommandLine& line) {
  const std::vector<std::string> jobs = line.GetAll("job");
  meridian::v1::CompareRequest request;
  if (jobs.size() == 2 && !line.Has("ranks")) {
    request.set_job_a(jobs[0]);
    request.set_job_b(jobs[1]);
  } else if (jobs.size() == 1 && line.Has("ranks")) {
    auto ranks = meridian::ParseRanks(line.Get("ranks"));
    if (!ranks.ok()) return Usage(std::string(ranks.status().message()));
    if (ranks->size() != 2) {
      return Usage("compare --ranks takes two ranks: --ranks R1,R2");
    }
    request.set_job_a(jobs[0]);
    *request.mutable_ranks() = {ranks->begin(), ranks->end()};
  } else {
    return Usage("compare needs --job A --job B, or --job A --ranks R1,R2");
  }
  auto head = line.GetInt("head", 0);
  if (!head.ok() || *head < 0 || *head > INT32_MAX) {
    return Usage("--head must be a count >= 0 (0: all)");
  }
  request.set_head(static_cast<int32_t>(*head));
  request.set_sort(line.Get("sort", "time"));
  return CallAndPrint("compare", stub, &meridian::v1::Query::Stub::Compare,
                      request, collector, line.Has("json"),
                      meridian::CompareJson, meridian::CompareText);
}

int Graph(meridian::v1::Query::Stub& stub, const std::string& collector,
          const meridian::CommandLine& line) {
  const std::string output = line.Get("output");
  if (output.empty()) return Usage("graph needs -o FILE");
  if (!line.Has("step")) return Usage("graph needs --step N");
  auto step = line.GetInt("step", 0);
  if (!step.ok()) return Usage(std::string(step.status().message()));
  std::string format = line.Get("format");
  if (format.empty()) {
    const bool graphml =
        absl::EndsWith(output, ".graphml") || absl::EndsWith(output, ".xml");
    format = graphml ? "graphml" : "dot";
  }
  if (format != "dot" && format != "graphml") {
    return Usage("--format must be dot or graphml");
  }
  grpc::ClientContext context;
  meridian::v1::GraphRequest request;
  request.set_job(line.Get("job"));
  request.set_step(*step);
  request.set_format(format == "graphml" ? meridian::v1::GRAPH_FORMAT_GRAPHML
                                         : meridian::v1::GRAPH_FORMAT_DOT);
  auto reader = stub.ExportGraph(&context, request);
  const int64_t bytes =
      WriteStream("graph", reader, context, output, collector);
  if (bytes < 0) return 1;
  printf(
      "wrote %s (%lld bytes): the dependency graph of job %s, step %lld, "
      "as %s\n",
      output.c_str(), static_cast<long long>(bytes), request.job().c_str(),
      static_cast<long long>(*step), format == "graphml" ? "GraphML" : "DOT");
  return 0;
}

// What a command gets: the arguments as given, the parsed line, and the
// collector's address.
struct Invocation {
  const std::vector<std::string>& args;
  const meridian::CommandLine& line;
  std::string collector;
};

std::unique_ptr<meridian::v1::Query::Stub> QueryStub(
    const std::string& collector) {
  return meridian::v1::Query::NewStub(CollectorChannel(collector));
}

int RunCommand(const Invocation& in) {
  if (std::find(in.args.begin(), in.args.end(), "--") == in.args.end()) {
    return Usage("run needs -- before the command: meridian run -- CMD...");
  }
  auto timeout = in.line.GetInt("flush-timeout", 60);
  if (!timeout.ok() || *timeout < 0 || *timeout > 86400) {
    return Usage("--flush-timeout must be seconds (0 to 86400)");
  }
  meridian::RunOptions run;
  run.collector = in.collector;
  run.job = in.line.Get("job");
  run.on_demand = in.line.Has("on-demand");
  run.flush_timeout_ms = static_cast<int>(*timeout * 1000);
  run.command.assign(in.line.positional().begin() + 1,
                     in.line.positional().end());
  return meridian::RunTraced(run);
}

int TraceCommand(const Invocation& in) {
  auto steps = in.line.GetInt("steps", 0);
  auto seconds = in.line.GetInt("seconds", 0);
  if (!steps.ok() || !seconds.ok() || *steps < 0 || *seconds < 0 ||
      *steps > 1000000 || *seconds > 86400 || (*steps > 0) == (*seconds > 0)) {
    return Usage("trace needs one of --steps N or --seconds S (positive)");
  }
  if (in.line.Has("local")) {
    return meridian::RequestTrace(in.line.Get("job"), static_cast<int>(*steps),
                                  static_cast<int>(*seconds));
  }
  auto timeout = in.line.GetInt("timeout", 10);
  if (!timeout.ok() || *timeout <= 0 || *timeout > 600) {
    return Usage("--timeout must be seconds (1 to 600)");
  }
  return TraceJob(
      in.collector, in.line.Get("job"), static_cast<uint32_t>(*steps),
      static_cast<uint32_t>(*seconds), static_cast<uint32_t>(*timeout));
}

int ImportCommand(const Invocation& in) {
  meridian::ImportOptions options;
  options.job = in.line.Get("job");
  options.format = in.line.Get("format");
  options.node = in.line.Get("node");
  if (!meridian::KnownImportFormat(options.format)) {
    return Usage(
        "import --format must be chrome, kineto, meridian, horovod, byteps, "
        "bluefog, mpitrace or nsight");
  }
  if (in.line.Has("rank")) {
    auto rank = in.line.GetInt("rank", -1);
    if (!rank.ok() || *rank < 0 || *rank > (1 << 24)) {
      return Usage("--rank must be a rank (0 or more)");
    }
    options.rank = static_cast<int32_t>(*rank);
  }
  for (const char* flag : {"clock-offset-ns", "epoch-ns"}) {
    if (!in.line.Has(flag)) continue;
    auto value = in.line.GetInt(flag, 0);
    if (!value.ok()) return Usage(absl::StrCat("--", flag, " must be ns"));
    (std::string(flag) == "epoch-ns" ? options.epoch_ns
                                     : options.clock_offset_ns) = *value;
  }
  options.paths.assign(in.line.positional().begin() + 1,
                       in.line.positional().end());
  if (options.paths.empty()) return Usage("import needs files: PATH...");
  return meridian::ImportFiles(CollectorChannel(in.collector), in.collector,
                               options);
}

int DeleteCommand(const Invocation& in) {
  auto stub = meridian::v1::Control::NewStub(CollectorChannel(in.collector));
  grpc::ClientContext context;
  meridian::v1::DeleteJobRequest request;
  request.set_job(in.line.Get("job"));
  meridian::v1::DeleteJobReply reply;
  grpc::Status status = stub->DeleteJob(&context, request, &reply);
  if (!status.ok()) return RpcFailed("delete", status, in.collector);
  printf("deleted job %s (%lld spans)\n", request.job().c_str(),
         static_cast<long long>(reply.spans()));
  return 0;
}

int JobsCommand(const Invocation& in) {
  return Jobs(*QueryStub(in.collector), in.collector);
}

int ClocksCommand(const Invocation& in) {
  return Clocks(*QueryStub(in.collector), in.collector, in.line.Get("job"),
                in.line.Has("json"));
}

template <int (*Analysis)(meridian::v1::Query::Stub&, const std::string&,
                          const meridian::CommandLine&)>
int AnalysisCommand(const Invocation& in) {
  return Analysis(*QueryStub(in.collector), in.collector, in.line);
}

int ExportCommand(const Invocation& in) {
  auto filter = meridian::ParseFilter(in.line);
  if (!filter.ok()) return Usage(std::string(filter.status().message()));
  if (in.line.Has("raw-clock") && in.line.Has("critical-path")) {
    return Usage(
        "export --critical-path needs the collector's clock: drop "
        "--raw-clock");
  }
  meridian::ExportOptions options;
  options.filter = *filter;
  options.output = in.line.Get("output");
  options.format = in.line.Get("format");
  options.per_rank_dir = in.line.Get("per-rank");
  options.raw_clock = in.line.Has("raw-clock");
  options.critical_path = in.line.Has("critical-path");
  if (in.line.Has("split-by")) {
    // "step:N" (main() joins "--split-by step N" so).
    const std::string split = in.line.Get("split-by");
    const size_t colon = split.find(':');
    options.split_by = split.substr(0, colon);
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(split.substr(colon + 1), &options.split_every)) {
      return Usage("--split-by needs step N or rank N");
    }
  }
  return meridian::ExportJob(*QueryStub(in.collector), in.collector, options);
}

int StatsCommand(const Invocation& in) {
  auto filter = meridian::ParseFilter(in.line);
  if (!filter.ok()) return Usage(std::string(filter.status().message()));
  return Stats(*QueryStub(in.collector), in.collector, *filter,
               in.line.Has("json"));
}

// Every command. `job_hint`: null if the command needs no --job; else what
// the usage error adds after "NAME needs --job J".
struct Command {
  const char* name;
  const char* job_hint;
  bool takes_arguments;  // positional arguments after the name (run's CMD)
  int (*run)(const Invocation&);
};
constexpr const char* kJobsHint = " (`meridian jobs` lists them)";
constexpr Command kCommands[] = {
    {"run", nullptr, true, RunCommand},
    {"import", "", true, ImportCommand},
    {"trace", "", false, TraceCommand},
    {"jobs", nullptr, false, JobsCommand},
    {"delete", kJobsHint, false, DeleteCommand},
    {"export", kJobsHint, false, ExportCommand},
    {"stats", kJobsHint, false, StatsCommand},
    {"clocks", kJobsHint, false, ClocksCommand},
    {"critical-path", kJobsHint, false, AnalysisCommand<CriticalPath>},
    {"stragglers", kJobsHint, false, AnalysisCommand<Stragglers>},
    {"steps", kJobsHint, false, AnalysisCommand<Steps>},
    {"compare", kJobsHint, false, AnalysisCommand<Compare>},
    {"graph", kJobsHint, false, AnalysisCommand<Graph>},
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& arg : args) {
    if (arg == "-o") arg = "--output";
  }
  // "--split-by step 10": one flag value, "step:10".
  for (size_t i = 0; i + 2 < args.size(); ++i) {
    if (args[i] == "--split-by" && !args[i + 2].empty() &&
        args[i + 2].find_first_not_of("0123456789") == std::string::npos) {
      args[i + 1] += ":" + args[i + 2];
      args.erase(args.begin() + static_cast<long>(i) + 2);
    }
  }
  std::vector<std::string> value_flags = meridian::kFilterFlags;
  value_flags.insert(value_flags.end(),
                     {"collector", "output", "seconds", "flush-timeout", "step",
                      "head", "sort", "format", "timeout", "rank", "node",
                      "clock-offset-ns", "epoch-ns", "per-rank", "split-by"});
  auto line = meridian::CommandLine::Parse(
      args, 1, value_flags,
      {"json", "help", "on-demand", "raw-clock", "critical-path", "local"});
  if (!line.ok()) return Usage(std::string(line.status().message()));
  if (line->Has("help")) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (line->positional().empty()) return Usage("no command given");
  const std::string& name = line->positional()[0];
  const Command* command = nullptr;
  for (const Command& c : kCommands) {
    if (name == c.name) command = &c;
  }
  if (command == nullptr) {
    return Usage(absl::StrCat("unknown command \"", name, "\""));
  }
  if (!command->takes_arguments && line->positional().size() != 1) {
    return Usage("give one command");
  }
  if (command->job_hint != nullptr && !line->Has("job")) {
    return Usage(absl::StrCat(name, " needs --job J", command->job_hint));
  }
  const char* env = getenv("MERIDIAN_COLLECTOR");
  return command->run(
      Invocation{args, *line,
                 line->Get("collector", env && *env ? env : "127.0.0.1:7070")});
}
