// trace_writer_bench: the trace exports' own cost, without the store: the
// same synthetic spans through ChromeTraceWriter, PerfettoTraceWriter and
// KinetoTraceWriter (one rank's file) into a sink that only counts bytes.
// Prints spans/s, MB/s and bytes a span per format; the last line is one
// JSON object.
//
//   trace_writer_bench [--spans 2000000] [--ranks 8]
//
// Each rank runs a loop of: a "forward" user range holding a
// cudaLaunchKernel and an MPI_Allreduce (bytes, comm, seq, step), and the
// launched kernel on a GPU stream (correlation, grid and block args). A
// block of such spans is made once and replayed at later times.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/command_line.h"
#include "query/export/chrome_trace.h"
#include "query/export/kineto_trace.h"
#include "query/export/perfetto_trace.h"

namespace meridian {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kT0 = 1700000000000000000;
constexpr int64_t kLoopNs = 10000;

JobCatalog MakeCatalog(int32_t ranks) {
  JobCatalog catalog;
  catalog.job.id = 1;
  catalog.job.name = "bench";
  catalog.job.min_start_ns = kT0;
  catalog.job.ranks = ranks;
  for (int32_t r = 0; r < ranks; ++r) {
    catalog.processes.push_back(
        {r + 1, absl::StrCat("node", r / 4), r, r % 4, 1000 + r});
    catalog.tracks.push_back(
        {2 * r + 1, r + 1, v1::TRACK_KIND_THREAD, 1000 + r, "main"});
    catalog.tracks.push_back({2 * r + 2, r + 1, v1::TRACK_KIND_GPU_STREAM, 7,
                              absl::StrCat("GPU ", r % 4, " stream 7")});
  }
  catalog.ops = {{1, v1::CATEGORY_USER, "forward"},
                 {2, v1::CATEGORY_CUDA_RUNTIME, "cudaLaunchKernel"},
                 {3, v1::CATEGORY_CUDA_KERNEL,
                  "void gemm_kernel<float, 128, 128>(float const*, float*)"},
                 {4, v1::CATEGORY_MPI, "MPI_Allreduce"}};
  return catalog;
}

// `loops` loops of every rank, in ascending start.
std::vector<StoredSpan> MakeBlock(int32_t ranks, int64_t loops) {
  std::vector<StoredSpan> spans;
  uint64_t correlation = 1;
  for (int64_t i = 0; i < loops; ++i) {
    const int64_t t = kT0 + i * kLoopNs;
    for (int32_t r = 0; r < ranks; ++r) {
      StoredSpan forward;
      forward.track_id = 2 * r + 1;
      forward.op_id = 1;
      forward.start_ns = t + r;
      forward.dur_ns = 8000;
      forward.step = i / 100;
      StoredSpan launch = forward;
      launch.op_id = 2;
      launch.start_ns = t + 100 + r;
      launch.dur_ns = 900;
      launch.correlation = correlation;
      StoredSpan kernel = launch;
      kernel.track_id = 2 * r + 2;
      kernel.op_id = 3;
      kernel.start_ns = t + 1500 + r;
      kernel.dur_ns = 3000;
      kernel.args.push_back({"grid", StoredArg::Type::kString, "[128,1,1]"});
      kernel.args.push_back({"block", StoredArg::Type::kString, "[256,1,1]"});
      StoredSpan allreduce = forward;
      allreduce.op_id = 4;
      allreduce.start_ns = t + 2000 + r;
      allreduce.dur_ns = 5000;
      allreduce.bytes = 4096;
      allreduce.comm = 0x44000000;
      allreduce.comm_size = static_cast<uint32_t>(ranks);
      allreduce.seq = static_cast<uint64_t>(i);
      spans.push_back(forward);
      spans.push_back(launch);
      spans.push_back(kernel);
      spans.push_back(allreduce);
    }
    ++correlation;
  }
  return spans;
}

struct Result {
  double seconds = 0;
  int64_t bytes = 0;
  int64_t spans = 0;
};

Result Run(TraceWriter& writer, const std::vector<StoredSpan>& block,
           int64_t block_ns, int64_t spans, const int64_t* bytes) {
  const Clock::time_point start = Clock::now();
  writer.Begin();
  int64_t written = 0;
  for (int64_t round = 0; written < spans; ++round) {
    const int64_t shift = round * block_ns;
    for (const StoredSpan& s : block) {
      writer.Add(s, s.start_ns + shift, s.dur_ns);
      if (++written == spans) break;
    }
  }
  writer.End();
  Result r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.bytes = *bytes;
  r.spans = writer.events();
  return r;
}

int Main(int argc, char** argv) {
  auto flags = CommandLine::Parse(std::vector<std::string>(argv, argv + argc),
                                  1, {"spans", "ranks"}, {});
  if (!flags.ok()) {
    fprintf(stderr, "%s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  const auto spans = flags->GetInt("spans", 2000000);
  const auto ranks = flags->GetInt("ranks", 8);
  if (!spans.ok() || !ranks.ok() || *spans <= 0 || *ranks <= 0) {
    fprintf(stderr, "--spans and --ranks take positive integers\n");
    return 2;
  }
  const JobCatalog catalog = MakeCatalog(static_cast<int32_t>(*ranks));
  const int64_t loops = 10000;
  const std::vector<StoredSpan> block =
      MakeBlock(static_cast<int32_t>(*ranks), loops);
  const int64_t block_ns = loops * kLoopNs;

  auto all = SpanSelection::Make(catalog, v1::SpanFilter());
  v1::SpanFilter one;
  one.add_ranks(0);
  auto rank0 = SpanSelection::Make(catalog, one);
  if (!all.ok() || !rank0.ok()) return 1;

  int64_t bytes = 0;
  auto sink = [&bytes](absl::string_view data) {
    bytes += static_cast<int64_t>(data.size());
    return true;
  };
  struct Format {
    const char* name;
    std::unique_ptr<TraceWriter> writer;
    Result result;
  };
  std::vector<Format> formats;
  formats.push_back(
      {"chrome", std::make_unique<ChromeTraceWriter>(catalog, *all, sink)});
  formats.push_back(
      {"perfetto", std::make_unique<PerfettoTraceWriter>(catalog, *all, sink)});
  formats.push_back(
      {"kineto (rank 0 of all spans)",
       std::make_unique<KinetoTraceWriter>(catalog, *rank0, sink)});
  for (Format& f : formats) {
    bytes = 0;
    f.result = Run(*f.writer, block, block_ns, *spans, &bytes);
    printf("%-30s %9.3f s  %6.2f M spans/s  %7.1f MB/s  %6.1f bytes/span\n",
           f.name, f.result.seconds, f.result.spans / f.result.seconds / 1e6,
           f.result.bytes / f.result.seconds / 1e6,
           static_cast<double>(f.result.bytes) / f.result.spans);
  }
  const Result& c = formats[0].result;
  const Result& p = formats[1].result;
  printf(
      "{\"spans\": %lld, \"chrome_s\": %.3f, \"chrome_bytes\": %lld, "
      "\"perfetto_s\": %.3f, \"perfetto_bytes\": %lld, "
      "\"perfetto_speedup_spans\": %.2f, \"perfetto_size_ratio\": %.3f}\n",
      static_cast<long long>(*spans), c.seconds,
      static_cast<long long>(c.bytes), p.seconds,
      static_cast<long long>(p.bytes), c.seconds / p.seconds,
      static_cast<double>(p.bytes) / c.bytes);
  return 0;
}

}  // namespace
}  // namespace meridian

int main(int argc, char** argv) { return meridian::Main(argc, argv); }
