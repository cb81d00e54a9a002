// meridian: the command-line client of a Meridian collector. See docs/cli.md;
// its commands and flags are defined in cli/command_tree.h.
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
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/analysis_report.h"
#include "cli/bash_completion.h"
#include "cli/clocks_report.h"
#include "cli/collector_call.h"
#include "cli/command_parse.h"
#include "cli/command_tree.h"
#include "cli/export_command.h"
#include "cli/filter_flags.h"
#include "cli/help_text.h"
#include "cli/import_command.h"
#include "cli/jobs_report.h"
#include "cli/man_page.h"
#include "cli/matrix_report.h"
#include "cli/mpitrace_profile_writer.h"
#include "cli/replay_command.h"
#include "cli/run_command.h"
#include "cli/sql_report.h"
#include "cli/stats_report.h"
#include "cli/trace_report.h"
#include "cli/waits_report.h"
#include "common/command_line.h"
#include "grpcpp/grpcpp.h"
#include "import/paths.h"
#include "import/trace_formats.h"
#include "meridian/v1/control.grpc.pb.h"
#include "meridian/v1/query.grpc.pb.h"
#include "net/client_channel.h"
#include "net/idle_deadline.h"
#include "query/health_report.h"

namespace {

// The command being run, whose usage a usage error prints.
const CLI::App* usage_of = nullptr;

// A usage error: the reason and the command's usage on stderr. Exit 2, or
// kRunFailed for meridian run, whose other exit statuses are its command's.
int Usage(const std::string& error) {
  fprintf(stderr, "meridian: %s\n\n%s", error.c_str(),
          usage_of == nullptr ? "" : meridian::HelpText(*usage_of).c_str());
  const bool run = usage_of != nullptr && usage_of->get_name() == "run";
  return run ? meridian::kRunFailed : 2;
}

// A channel to the collector with the TLS and token settings of the
// environment (MERIDIAN_TLS_CA, MERIDIAN_TOKEN, ...: net/client_channel.h);
// exits with status 2 and the reason if they cannot be used.
std::shared_ptr<grpc::Channel> CollectorChannel(const std::string& collector) {
  meridian::ClientSecurity security;
  absl::Status status = meridian::AddSecurityFromEnvironment(&security);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      status.ok() ? meridian::ClientChannel(collector, security,
                                            meridian::kCliMaxReplyBytes)
                  : absl::StatusOr<std::shared_ptr<grpc::Channel>>(status);
  if (!channel.ok()) {
    fprintf(stderr, "meridian: %s\n",
            std::string(channel.status().message()).c_str());
    exit(2);
  }
  return *channel;
}

// Writes the reply `start` streams (on `context`) to `output`, beside it
// first and renamed at the end: never a partial file. Each chunk must come
// within --request-timeout of the one before. Returns the bytes written,
// or -1 after saying why not.
template <typename Start>
int64_t WriteStream(const char* what, const Start& start,
                    grpc::ClientContext& context, const std::string& output,
                    const meridian::CollectorTarget& collector) {
  const std::string partial = output + ".partial";
  std::ofstream file(partial, std::ios::binary | std::ios::trunc);
  if (!file) {
    fprintf(stderr, "meridian: %s: cannot write %s\n", what, partial.c_str());
    return -1;
  }
  int64_t bytes = 0;
  grpc::Status status;
  bool silent;
  {
    meridian::IdleDeadline idle(&context, collector.request_timeout());
    auto reader = start();
    meridian::v1::TraceChunk chunk;
    while (reader->Read(&chunk)) {
      idle.Progress();
      file.write(chunk.data().data(), chunk.data().size());
      bytes += chunk.data().size();
    }
    status = reader->Finish();
    silent = idle.expired();
  }
  file.close();
  if (!status.ok() || !file) {
    std::remove(partial.c_str());
    if (!status.ok()) {
      meridian::CallFailed(what, status, collector, silent);
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
// order to its processes of the job; prints what each node reported (as
// JSON with `json`, also when no process was reached).
int TraceJob(const meridian::CollectorTarget& collector, const std::string& job,
             uint32_t steps, uint32_t seconds, uint32_t timeout_s, bool json) {
  auto stub =
      meridian::v1::Control::NewStub(CollectorChannel(collector.address));
  // The collector answers after at most `timeout_s` of waiting for the
  // agents; its own --timeout bounds this call, not --request-timeout.
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
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    fprintf(stderr,
            "meridian: trace: the collector at %s did not answer within %u s "
            "(--timeout + 10 s)\n",
            collector.address.c_str(), timeout_s + 10);
    return 1;
  }
  if (!status.ok()) {
    meridian::CallFailed("trace", status, collector);
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      fprintf(stderr,
              "meridian: trace: --local asks this node's agent alone\n");
    }
    return 1;
  }
  if (reply.unanswered() > 0) {
    fprintf(stderr,
            "meridian: trace: %u agents did not answer within %u s; their "
            "processes may still start recording\n",
            reply.unanswered(), timeout_s);
  }
  const bool reached = meridian::TracedProcesses(reply) > 0;
  if (!reached) {
    fprintf(stderr,
            "meridian: trace: no process of job %s on the %d agents that "
            "answered\n",
            job.c_str(), reply.nodes_size());
  }
  if (json || reached) {
    const std::string out =
        json ? meridian::TraceJson(job, steps, seconds, reply)
             : meridian::TraceText(job, steps, seconds, reply);
    fwrite(out.data(), 1, out.size(), stdout);
  }
  return reached ? 0 : 1;
}

// Calls a unary Query RPC: 0, or the exit code after saying why it failed.
template <typename Request, typename Reply>
int Call(const char* what, meridian::v1::Query::Stub& stub,
         grpc::Status (meridian::v1::Query::Stub::*rpc)(grpc::ClientContext*,
                                                        const Request&, Reply*),
         const Request& request, const meridian::CollectorTarget& collector,
         Reply* reply) {
  grpc::ClientContext context;
  meridian::SetRequestDeadline(collector, &context);
  grpc::Status status = (stub.*rpc)(&context, request, reply);
  return status.ok() ? 0 : meridian::CallFailed(what, status, collector);
}

void Print(const std::string& out) {
  fwrite(out.data(), 1, out.size(), stdout);
}

// Calls a unary Query RPC and prints its reply as text, or as JSON.
template <typename Request, typename Reply>
int CallAndPrint(const char* what, meridian::v1::Query::Stub& stub,
                 grpc::Status (meridian::v1::Query::Stub::*rpc)(
                     grpc::ClientContext*, const Request&, Reply*),
                 const Request& request,
                 const meridian::CollectorTarget& collector, bool json,
                 std::string (*as_json)(const Reply&),
                 std::string (*as_text)(const Reply&)) {
  Reply reply;
  if (int failed = Call(what, stub, rpc, request, collector, &reply)) {
    return failed;
  }
  Print(json ? as_json(reply) : as_text(reply));
  return 0;
}

int Clocks(meridian::v1::Query::Stub& stub,
           const meridian::CollectorTarget& collector, const std::string& job,
           bool json, bool resolve) {
  meridian::v1::ClocksRequest request;
  request.set_job(job);
  request.set_resolve(resolve);
  return CallAndPrint("clocks", stub, &meridian::v1::Query::Stub::GetClocks,
                      request, collector, json, meridian::ClocksJson,
                      meridian::ClocksText);
}

// `meridian stats --mpitrace DIR`: each rank's profile as mpitrace writes
// it (cli/mpitrace_profile_writer.h), "rank R of N" with the job's world
// size.
int WriteMpitrace(meridian::v1::Query::Stub& stub,
                  const meridian::CollectorTarget& collector,
                  const meridian::v1::StatsReply& stats, const std::string& job,
                  const std::string& dir) {
  meridian::v1::ListJobsRequest request;
  request.set_job(job);
  meridian::v1::ListJobsReply jobs;
  if (int failed = Call("stats", stub, &meridian::v1::Query::Stub::ListJobs,
                        request, collector, &jobs)) {
    return failed;
  }
  const int32_t world_size =
      jobs.jobs_size() == 1 ? jobs.jobs(0).world_size() : 0;
  absl::StatusOr<int> written =
      meridian::WriteMpitraceProfiles(stats, world_size, dir);
  if (!written.ok()) {
    fprintf(stderr, "meridian: stats: %s\n",
            std::string(written.status().message()).c_str());
    return 1;
  }
  fprintf(stderr, "meridian stats: wrote %d profiles to %s\n", *written,
          dir.c_str());
  return 0;
}

// With `mpitrace_dir`, also each rank's operations, written there; with
// `by_callsite`, also the operations per call site.
int Stats(meridian::v1::Query::Stub& stub,
          const meridian::CollectorTarget& collector,
          const meridian::v1::SpanFilter& filter, bool json,
          const std::string& mpitrace_dir, bool by_callsite) {
  meridian::v1::StatsRequest request;
  *request.mutable_filter() = filter;
  request.set_per_rank(!mpitrace_dir.empty());
  request.set_by_callsite(by_callsite);
  // The files get mpitrace's distribution rows, and so does the text.
  request.set_mpitrace_bins(!mpitrace_dir.empty());
  meridian::v1::StatsReply reply;
  if (int failed = Call("stats", stub, &meridian::v1::Query::Stub::GetStats,
                        request, collector, &reply)) {
    return failed;
  }
  Print(json ? meridian::StatsJson(reply, by_callsite)
             : meridian::StatsText(reply, by_callsite));
  if (mpitrace_dir.empty()) return 0;
  return WriteMpitrace(stub, collector, reply, filter.job(), mpitrace_dir);
}

// `meridian stats --matrix`: the communication matrix alone, as text, JSON
// or CSV.
int Matrix(meridian::v1::Query::Stub& stub,
           const meridian::CollectorTarget& collector,
           const meridian::v1::SpanFilter& filter, bool expand_collectives,
           bool json, bool csv) {
  meridian::v1::StatsRequest request;
  *request.mutable_filter() = filter;
  request.set_matrix(true);
  request.set_expand_collectives(expand_collectives);
  meridian::v1::StatsReply reply;
  if (int failed = Call("stats", stub, &meridian::v1::Query::Stub::GetStats,
                        request, collector, &reply)) {
    return failed;
  }
  Print(json  ? meridian::MatrixJson(reply)
        : csv ? meridian::MatrixCsv(reply)
              : meridian::MatrixText(reply, expand_collectives));
  return 0;
}

int CriticalPath(meridian::v1::Query::Stub& stub,
                 const meridian::CollectorTarget& collector,
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

int Stragglers(meridian::v1::Query::Stub& stub,
               const meridian::CollectorTarget& collector,
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

int Waits(meridian::v1::Query::Stub& stub,
          const meridian::CollectorTarget& collector,
          const meridian::CommandLine& line) {
  auto request = meridian::WaitsRequestOf(line);
  if (!request.ok()) return Usage(std::string(request.status().message()));
  return CallAndPrint("waits", stub, &meridian::v1::Query::Stub::Waits,
                      *request, collector, line.Has("json"),
                      meridian::WaitsJson, meridian::WaitsText);
}

// `meridian health`; --watch asks every second until the job finishes.
int Health(meridian::v1::Query::Stub& stub,
           const meridian::CollectorTarget& collector,
           const meridian::CommandLine& line) {
  meridian::v1::HealthRequest request;
  request.set_job(line.Get("job"));
  if (line.Has("stall-after")) {
    double seconds = 0;
    if (!absl::SimpleAtod(line.Get("stall-after"), &seconds) ||
        !(seconds > 0 && seconds <= 86400)) {
      return Usage("--stall-after must be seconds, more than 0, at most a day");
    }
    request.set_stall_after_ms(
        std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)));
  }
  const bool json = line.Has("json");
  // A job just launched may not be known yet: its agents report every
  // second and its first batch may still be on its way.
  const absl::Time known_by = absl::Now() + absl::Seconds(10);
  bool answered = false;
  for (;;) {
    meridian::v1::HealthReply reply;
    grpc::ClientContext context;
    meridian::SetRequestDeadline(collector, &context);
    const grpc::Status status = stub.GetHealth(&context, request, &reply);
    if (status.error_code() == grpc::StatusCode::NOT_FOUND &&
        line.Has("watch") && !answered && absl::Now() < known_by) {
      absl::SleepFor(absl::Seconds(1));  // the agents' next report
      continue;
    }
    if (!status.ok()) return meridian::CallFailed("health", status, collector);
    Print(json ? meridian::HealthJson(reply) : meridian::HealthText(reply));
    answered = true;
    if (!line.Has("watch") || reply.state() == "finished") return 0;
    fflush(stdout);
    absl::SleepFor(absl::Seconds(1));  // a person's or a script's poll
  }
}

int Steps(meridian::v1::Query::Stub& stub,
          const meridian::CollectorTarget& collector,
          const meridian::CommandLine& line) {
  meridian::v1::StepsRequest request;
  request.set_job(line.Get("job"));
  if (line.Has("rank")) {
    auto rank = line.GetInt("rank", 0);
    if (!rank.ok() || *rank < 0 || *rank > INT32_MAX) {
      return Usage("--rank must be a rank (an integer >= 0)");
    }
    request.set_rank(static_cast<int32_t>(*rank));
  }
  return CallAndPrint("steps", stub, &meridian::v1::Query::Stub::GetSteps,
                      request, collector, line.Has("json"), meridian::StepsJson,
                      meridian::StepsText);
}

int Compare(meridian::v1::Query::Stub& stub,
            const meridian::CollectorTarget& collector,
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

int Graph(meridian::v1::Query::Stub& stub,
          const meridian::CollectorTarget& collector,
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
  const int64_t bytes = WriteStream(
      "graph", [&] { return stub.ExportGraph(&context, request); }, context,
      output, collector);
  if (bytes < 0) return 1;
  printf(
      "wrote %s (%lld bytes): the dependency graph of job %s, step %lld, "
      "as %s\n",
      output.c_str(), static_cast<long long>(bytes), request.job().c_str(),
      static_cast<long long>(*step), format == "graphml" ? "GraphML" : "DOT");
  return 0;
}

int Replay(meridian::v1::Query::Stub& stub,
           const meridian::CollectorTarget& collector,
           const meridian::CommandLine& line) {
  auto request = meridian::ReplayRequestOf(line);
  if (!request.ok()) return Usage(std::string(request.status().message()));
  meridian::v1::ReplayReply reply;
  if (int failed = Call("replay", stub, &meridian::v1::Query::Stub::Replay,
                        *request, collector, &reply)) {
    return failed;
  }
  if (line.Has("trace")) {
    const std::string output = line.Get("trace");
    grpc::ClientContext context;
    const int64_t bytes = WriteStream(
        "replay", [&] { return stub.ExportReplayTrace(&context, *request); },
        context, output, collector);
    if (bytes < 0) return 1;
    fprintf(stderr,
            "meridian replay: wrote %s (%lld bytes): measured and predicted "
            "timelines of job %s\n",
            output.c_str(), static_cast<long long>(bytes),
            request->job().c_str());
  }
  Print(line.Has("json") ? meridian::ReplayJson(reply)
                         : meridian::ReplayText(reply));
  return 0;
}

// What a command gets: its flags and arguments, and the collector's
// address and --request-timeout.
struct Invocation {
  const meridian::CommandLine& line;
  meridian::CollectorTarget collector;
};

std::unique_ptr<meridian::v1::Query::Stub> QueryStub(
    const meridian::CollectorTarget& collector) {
  return meridian::v1::Query::NewStub(CollectorChannel(collector.address));
}

int RunCommand(const Invocation& in) {
  if (in.line.positional().empty()) {
    return Usage("run needs a command after --: meridian run -- CMD...");
  }
  auto timeout = in.line.GetInt("flush-timeout", 60);
  if (!timeout.ok() || *timeout < 0 || *timeout > 86400) {
    return Usage("--flush-timeout must be seconds (0 to 86400)");
  }
  meridian::RunOptions run;
  run.collector = in.collector.address;
  run.job = in.line.Get("job");
  run.on_demand = in.line.Has("on-demand");
  run.append = in.line.Has("append");
  run.json = in.line.Has("json");
  run.flush_timeout_ms = static_cast<int>(*timeout * 1000);
  run.command = in.line.positional();
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
                                  static_cast<int>(*seconds),
                                  in.line.Has("json"));
  }
  auto timeout = in.line.GetInt("timeout", 10);
  if (!timeout.ok() || *timeout <= 0 || *timeout > 600) {
    return Usage("--timeout must be seconds (1 to 600)");
  }
  return TraceJob(in.collector, in.line.Get("job"),
                  static_cast<uint32_t>(*steps),
                  static_cast<uint32_t>(*seconds),
                  static_cast<uint32_t>(*timeout), in.line.Has("json"));
}

int ImportCommand(const Invocation& in) {
  meridian::ImportFlags options;
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
  options.paths = in.line.positional();
  if (options.paths.empty()) return Usage("import needs files: PATH...");
  return meridian::ImportFiles(CollectorChannel(in.collector.address),
                               in.collector, options);
}

int DeleteCommand(const Invocation& in) {
  auto stub =
      meridian::v1::Control::NewStub(CollectorChannel(in.collector.address));
  grpc::ClientContext context;
  meridian::SetRequestDeadline(in.collector, &context);
  meridian::v1::DeleteJobRequest request;
  request.set_job(in.line.Get("job"));
  meridian::v1::DeleteJobReply reply;
  grpc::Status status = stub->DeleteJob(&context, request, &reply);
  if (!status.ok()) return meridian::CallFailed("delete", status, in.collector);
  printf("deleted job %s (%lld spans)\n", request.job().c_str(),
         static_cast<long long>(reply.spans()));
  return 0;
}

int JobsCommand(const Invocation& in) {
  return CallAndPrint(
      "jobs", *QueryStub(in.collector), &meridian::v1::Query::Stub::ListJobs,
      meridian::v1::ListJobsRequest(), in.collector, in.line.Has("json"),
      meridian::JobsJson, meridian::JobsText);
}

int ClocksCommand(const Invocation& in) {
  return Clocks(*QueryStub(in.collector), in.collector, in.line.Get("job"),
                in.line.Has("json"), in.line.Has("resolve"));
}

int SqlCommand(const Invocation& in) {
  if (in.line.Has("json") && in.line.Has("csv")) {
    return Usage("sql takes --json or --csv, not both");
  }
  meridian::v1::SqlRequest request;
  request.set_query(absl::StrJoin(in.line.positional(), " "));
  request.set_job(in.line.Get("job"));
  if (in.line.Has("max-rows")) {
    auto rows = in.line.GetInt("max-rows", 0);
    if (!rows.ok() || *rows < 1 || *rows > 1000000) {
      return Usage("--max-rows must be 1 to 1000000");
    }
    request.set_max_rows(*rows);
  }
  meridian::v1::SqlReply reply;
  if (int failed =
          Call("sql", *QueryStub(in.collector), &meridian::v1::Query::Stub::Sql,
               request, in.collector, &reply)) {
    return failed;
  }
  Print(in.line.Has("json")  ? meridian::SqlJson(reply)
        : in.line.Has("csv") ? meridian::SqlCsv(reply)
                             : meridian::SqlText(reply));
  return 0;
}

template <int (*Analysis)(meridian::v1::Query::Stub&,
                          const meridian::CollectorTarget&,
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
    // "--split-by step N" (two values), or "--split-by step:N".
    std::vector<std::string> split = in.line.GetAll("split-by");
    if (split.size() == 1 && split[0].find(':') != std::string::npos) {
      const size_t colon = split[0].find(':');
      split = {split[0].substr(0, colon), split[0].substr(colon + 1)};
    }
    if (split.size() != 2 ||
        !absl::SimpleAtoi(split[1], &options.split_every)) {
      return Usage("--split-by needs step N or rank N");
    }
    options.split_by = split[0];
  }
  return meridian::ExportJob(*QueryStub(in.collector), in.collector, options);
}

int StatsCommand(const Invocation& in) {
  auto filter = meridian::ParseFilter(in.line);
  if (!filter.ok()) return Usage(std::string(filter.status().message()));
  const bool matrix = in.line.Has("matrix");
  for (const char* flag : {"expand-collectives", "csv"}) {
    if (in.line.Has(flag) && !matrix) {
      return Usage(absl::StrCat("--", flag, " needs --matrix"));
    }
  }
  if (in.line.Has("csv") && in.line.Has("json")) {
    return Usage("--csv and --json: choose one");
  }
  if (in.line.Has("mpitrace") && (matrix || in.line.Get("mpitrace").empty())) {
    return Usage(matrix ? "--mpitrace and --matrix: one at a time"
                        : "--mpitrace needs a directory");
  }
  if (in.line.Has("by-callsite") && matrix) {
    return Usage("--by-callsite and --matrix: one at a time");
  }
  if (matrix) {
    return Matrix(*QueryStub(in.collector), in.collector, *filter,
                  in.line.Has("expand-collectives"), in.line.Has("json"),
                  in.line.Has("csv"));
  }
  return Stats(*QueryStub(in.collector), in.collector, *filter,
               in.line.Has("json"), in.line.Get("mpitrace"),
               in.line.Has("by-callsite"));
}

// `meridian completion bash`: the completion script (hidden; for
// deploy/install.sh).
int CompletionCommand(const Invocation& in) {
  if (in.line.positional() != std::vector<std::string>{"bash"}) {
    return Usage("completion: only bash is supported");
  }
  fputs(meridian::BashCompletion(*usage_of->get_parent()).c_str(), stdout);
  return 0;
}

// `meridian man [COMMAND]`: a man page on stdout; `meridian man --dir DIR`:
// all of them into DIR (hidden; for deploy/install.sh).
int ManCommand(const Invocation& in) {
  const CLI::App& tree = *usage_of->get_parent();
  const std::string name =
      in.line.positional().empty() ? "" : in.line.positional()[0];
  const CLI::App* command = meridian::FindCommand(tree, name);
  if (command == nullptr) {
    return Usage(absl::StrCat("man: unknown command \"", name, "\""));
  }
  if (!in.line.Has("dir")) {
    fputs(meridian::ManPage(*command).c_str(), stdout);
    return 0;
  }
  std::vector<const CLI::App*> pages = meridian::VisibleCommands(tree);
  pages.insert(pages.begin(), &tree);
  for (const CLI::App* page : pages) {
    const std::string path =
        meridian::PathJoin(in.line.Get("dir"), meridian::ManPageName(*page));
    std::ofstream file(path, std::ios::trunc);
    file << meridian::ManPage(*page);
    file.close();
    if (!file) {
      fprintf(stderr, "meridian: man: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}

// What runs each command of the tree (cli/command_tree.h).
struct Command {
  const char* name;
  int (*run)(const Invocation&);
};
constexpr Command kCommands[] = {
    {"run", RunCommand},
    {"import", ImportCommand},
    {"trace", TraceCommand},
    {"jobs", JobsCommand},
    {"delete", DeleteCommand},
    {"export", ExportCommand},
    {"stats", StatsCommand},
    {"clocks", ClocksCommand},
    {"critical-path", AnalysisCommand<CriticalPath>},
    {"stragglers", AnalysisCommand<Stragglers>},
    {"waits", AnalysisCommand<Waits>},
    {"health", AnalysisCommand<Health>},
    {"steps", AnalysisCommand<Steps>},
    {"compare", AnalysisCommand<Compare>},
    {"graph", AnalysisCommand<Graph>},
    {"replay", AnalysisCommand<Replay>},
    {"sql", SqlCommand},
    {"completion", CompletionCommand},
    {"man", ManCommand},
};

}  // namespace

int main(int argc, char** argv) {
  const std::unique_ptr<CLI::App> tree = meridian::MeridianCommandTree();
  const meridian::ParsedArgs parsed =
      meridian::ParseArgs(*tree, std::vector<std::string>(argv, argv + argc));
  usage_of = meridian::FindCommand(*tree, parsed.command);
  switch (parsed.action) {
    case meridian::ParsedArgs::Action::kHelp:
      fputs(meridian::HelpText(*usage_of).c_str(), stdout);
      return 0;
    case meridian::ParsedArgs::Action::kVersion:
      printf("%s\n", parsed.message.c_str());
      return 0;
    case meridian::ParsedArgs::Action::kUsageError:
      return Usage(parsed.message);
    case meridian::ParsedArgs::Action::kRun:
      break;
  }
  for (const Command& command : kCommands) {
    if (parsed.command == command.name) {
      return command.run(Invocation{
          parsed.line, {parsed.collector, parsed.request_timeout_s}});
    }
  }
  return Usage(absl::StrCat("no code runs command \"", parsed.command, "\""));
}
