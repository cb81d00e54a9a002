// meridian: the command-line client of a Meridian collector. See docs/cli.md.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/run_command.h"
#include "common/command_line.h"
#include "grpcpp/grpcpp.h"
#include "meridian/v1/query.grpc.pb.h"
#include "query/clocks_report.h"
#include "query/filter_flags.h"
#include "query/stats_report.h"

namespace {

constexpr char kUsage[] =
    R"(usage: meridian [--collector HOST:PORT] COMMAND [flags]

Commands:
  jobs                      the jobs stored: ranks, nodes, spans, time range
  export --job J -o FILE    one merged Chrome trace (chrome://tracing, Perfetto)
  stats --job J [--json]    mpitrace-style communication statistics
  clocks --job J [--json]   each node's clock offset, drift, uncertainty and
                            causal correction; violations before and after
  run [--job J] [--on-demand] [--flush-timeout S] -- CMD...
                            run CMD traced (works around or inside mpirun)
  trace --job J --steps N | --seconds S
                            make the job's processes on this node record the
                            next N steps (or S seconds); see --on-demand

export shows every node on the collector's clock (docs/clocks.md);
--raw-clock shows the nodes' raw timestamps instead.

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

int Export(meridian::v1::Query::Stub& stub, const std::string& collector,
           const meridian::v1::SpanFilter& filter, const std::string& output,
           bool raw_clock) {
  if (output.empty()) return Usage("export needs -o FILE");
  // Written beside the target and renamed at the end: never a partial file.
  const std::string partial = output + ".partial";
  std::ofstream file(partial, std::ios::binary | std::ios::trunc);
  if (!file) {
    fprintf(stderr, "meridian: export: cannot write %s\n", partial.c_str());
    return 1;
  }
  grpc::ClientContext context;
  meridian::v1::ExportRequest request;
  *request.mutable_filter() = filter;
  request.set_raw_clock(raw_clock);
  auto reader = stub.ExportTrace(&context, request);
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
    if (!status.ok()) return RpcFailed("export", status, collector);
    fprintf(stderr, "meridian: export: writing %s failed\n", partial.c_str());
    return 1;
  }
  if (std::rename(partial.c_str(), output.c_str()) != 0) {
    fprintf(stderr, "meridian: export: cannot rename %s to %s\n",
            partial.c_str(), output.c_str());
    return 1;
  }
  printf(
      "wrote %s (%lld bytes): the merged trace of job %s; open it in "
      "https://ui.perfetto.dev or chrome://tracing\n",
      output.c_str(), static_cast<long long>(bytes), filter.job().c_str());
  return 0;
}

int Clocks(meridian::v1::Query::Stub& stub, const std::string& collector,
           const std::string& job, bool json) {
  grpc::ClientContext context;
  meridian::v1::ClocksRequest request;
  request.set_job(job);
  meridian::v1::ClocksReply reply;
  grpc::Status status = stub.GetClocks(&context, request, &reply);
  if (!status.ok()) return RpcFailed("clocks", status, collector);
  std::string out =
      json ? meridian::ClocksJson(reply) : meridian::ClocksText(reply);
  fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int Stats(meridian::v1::Query::Stub& stub, const std::string& collector,
          const meridian::v1::SpanFilter& filter, bool json) {
  grpc::ClientContext context;
  meridian::v1::StatsRequest request;
  *request.mutable_filter() = filter;
  meridian::v1::StatsReply reply;
  grpc::Status status = stub.GetStats(&context, request, &reply);
  if (!status.ok()) return RpcFailed("stats", status, collector);
  std::string out =
      json ? meridian::StatsJson(reply) : meridian::StatsText(reply);
  fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& arg : args) {
    if (arg == "-o") arg = "--output";
  }
  std::vector<std::string> value_flags = meridian::kFilterFlags;
  value_flags.insert(value_flags.end(),
                     {"collector", "output", "seconds", "flush-timeout"});
  auto line = meridian::CommandLine::Parse(
      args, 1, value_flags, {"json", "help", "on-demand", "raw-clock"});
  if (!line.ok()) return Usage(std::string(line.status().message()));
  if (line->Has("help")) {
    fputs(kUsage, stdout);
    return 0;
  }
  const char* env = getenv("MERIDIAN_COLLECTOR");
  const std::string collector =
      line->Get("collector", env && *env ? env : "127.0.0.1:7070");
  if (!line->positional().empty() && line->positional()[0] == "run") {
    if (std::find(args.begin(), args.end(), "--") == args.end()) {
      return Usage("run needs -- before the command: meridian run -- CMD...");
    }
    auto timeout = line->GetInt("flush-timeout", 60);
    if (!timeout.ok() || *timeout < 0 || *timeout > 86400) {
      return Usage("--flush-timeout must be seconds (0 to 86400)");
    }
    meridian::RunOptions run;
    run.collector = collector;
    run.job = line->Get("job");
    run.on_demand = line->Has("on-demand");
    run.flush_timeout_ms = static_cast<int>(*timeout * 1000);
    run.command.assign(line->positional().begin() + 1,
                       line->positional().end());
    return meridian::RunTraced(run);
  }
  if (line->positional().size() != 1) {
    return Usage(line->positional().empty() ? "no command given"
                                            : "give one command");
  }
  const std::string command = line->positional()[0];
  if (command == "trace") {
    auto steps = line->GetInt("steps", 0);
    auto seconds = line->GetInt("seconds", 0);
    if (!line->Has("job")) return Usage("trace needs --job J");
    if (!steps.ok() || !seconds.ok() || *steps < 0 || *seconds < 0 ||
        *steps > 1000000 || *seconds > 86400 ||
        (*steps > 0) == (*seconds > 0)) {
      return Usage("trace needs one of --steps N or --seconds S (positive)");
    }
    return meridian::RequestTrace(line->Get("job"), static_cast<int>(*steps),
                                  static_cast<int>(*seconds));
  }
  auto stub = meridian::v1::Query::NewStub(
      grpc::CreateChannel(collector, grpc::InsecureChannelCredentials()));

  if (command == "jobs") return Jobs(*stub, collector);
  if (command == "clocks") {
    if (!line->Has("job")) {
      return Usage("clocks needs --job J (`meridian jobs` lists them)");
    }
    return Clocks(*stub, collector, line->Get("job"), line->Has("json"));
  }
  if (command != "export" && command != "stats") {
    return Usage(absl::StrCat("unknown command \"", command, "\""));
  }
  if (!line->Has("job")) {
    return Usage(
        absl::StrCat(command, " needs --job J (`meridian jobs` lists them)"));
  }
  auto filter = meridian::ParseFilter(*line);
  if (!filter.ok()) return Usage(std::string(filter.status().message()));
  if (command == "export") {
    return Export(*stub, collector, *filter, line->Get("output"),
                  line->Has("raw-clock"));
  }
  return Stats(*stub, collector, *filter, line->Has("json"));
}
