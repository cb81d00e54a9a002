// load_bench: many simulated agents against one collector process under a
// memory cap, a memory cgroup (./bench/run.sh load). Each agent opens its own
// channel and stream, sends its batches with a window of 16 and, told
// RESOURCE_EXHAUSTED, waits the collector's retry-after-ms and resends what was
// not acknowledged, as meridian-agent does. Reports the collector's peak memory
// (VmHWM), ack latency percentiles (write to ack), retries, and whether
// every span is stored exactly once; the JSON line last.
//
//   load_bench --collector-bin PATH [--agents 1000] [--batches 10]
//              [--spans 100] [--memory-mib 1024] [--dir DIR]
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "common/command_line.h"
#include "grpcpp/grpcpp.h"
#include "meridian/v1/ingest.grpc.pb.h"
#include "store/store.h"
#include "tests/collector_process.h"
#include "wire/batch_builder.h"

namespace {

using Clock = std::chrono::steady_clock;

// A memory cgroup (v1, as on this machine) capping the collector: its
// directory, or "" if none can be made (then the cap is not enforced, and
// the report says so).
std::string MakeCgroup(uint64_t cap) {
  const std::string dir =
      "/sys/fs/cgroup/memory/meridian-load-" + std::to_string(getpid());
  if (mkdir(dir.c_str(), 0755) != 0) return "";
  std::ofstream(dir + "/memory.limit_in_bytes") << cap;
  return dir;
}

int64_t ReadNumber(const std::string& path) {
  std::ifstream in(path);
  int64_t n = -1;
  in >> n;
  return n;
}

int64_t PeakRssKib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

std::vector<meridian::v1::Batch> AgentBatches(int agent, int batches,
                                              int spans) {
  meridian::BatchBuilder builder("load-agent-" + std::to_string(agent));
  const int p = builder.DeclareProcess(
      {"load", "node-" + std::to_string(agent), agent, 0, 1000 + agent});
  const int t =
      builder.DeclareTrack(p, meridian::v1::TRACK_KIND_THREAD, 1, "main");
  std::vector<meridian::v1::Batch> out;
  int64_t at = 1700000000000000000LL;
  for (int b = 0; b < batches; ++b) {
    const int ring = builder.AddRing(agent + 1, 0, b * spans);
    for (int s = 0; s < spans; ++s) {
      builder.AddColumnSpan(t, ring, b * spans + s, meridian::v1::CATEGORY_MPI,
                            "MPI_Allreduce", at, 1000);
      at += 2000;
    }
    builder.SetRingEnd(ring, (b + 1) * spans);
    out.push_back(builder.Take());
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto flags = meridian::CommandLine::Parse(
      args, 1,
      {"collector-bin", "agents", "batches", "spans", "memory-mib", "dir",
       "max-streams"},
      {});
  if (!flags.ok() || !flags->Has("collector-bin")) {
    fprintf(stderr,
            "usage: load_bench --collector-bin PATH [--agents N] ...\n");
    return 2;
  }
  const int agents = static_cast<int>(*flags->GetInt("agents", 1000));
  const int batches = static_cast<int>(*flags->GetInt("batches", 10));
  const int spans = static_cast<int>(*flags->GetInt("spans", 100));
  const int64_t cap_mib = *flags->GetInt("memory-mib", 1024);
  const int max_streams = static_cast<int>(*flags->GetInt("max-streams", 256));
  const std::string dir = flags->Get("dir", "/tmp");
  const std::string db = dir + "/load_bench.db";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((db + suffix).c_str());
  }
  const std::string cgroup = MakeCgroup(static_cast<uint64_t>(cap_mib) << 20);
  auto collector = meridian::CollectorProcess::Start(
      flags->Get("collector-bin"), db, "127.0.0.1:0",
      {"--sync", "normal", "--max-streams", std::to_string(max_streams)},
      [&cgroup] {
        if (!cgroup.empty())
          std::ofstream(cgroup + "/cgroup.procs") << getpid();
      });
  if (!collector.ok()) {
    fprintf(stderr, "load_bench: %s\n",
            std::string(collector.status().message()).c_str());
    return 1;
  }
  std::vector<std::vector<meridian::v1::Batch>> work(agents);
  for (int a = 0; a < agents; ++a) work[a] = AgentBatches(a, batches, spans);

  std::mutex mu;
  std::vector<double> latencies_ms;
  std::atomic<int64_t> retries{0}, failures{0}, duplicates{0};
  const Clock::time_point begin = Clock::now();
  std::vector<std::thread> threads;
  for (int a = 0; a < agents; ++a) {
    threads.emplace_back([&, a] {
      auto channel = grpc::CreateChannel(collector->address(),
                                         grpc::InsecureChannelCredentials());
      auto stub = meridian::v1::Ingest::NewStub(channel);
      const auto& mine = work[a];
      size_t done = 0;
      std::vector<double> local;
      for (int attempt = 0; done < mine.size() && attempt < 200; ++attempt) {
        grpc::ClientContext context;
        auto stream = stub->Stream(&context);
        std::vector<Clock::time_point> sent(mine.size());
        size_t next = done;
        while (done < mine.size()) {
          while (next < mine.size() && next - done < 16) {
            sent[next] = Clock::now();
            if (!stream->Write(mine[next])) break;
            ++next;
          }
          meridian::v1::Ack ack;
          if (!stream->Read(&ack)) break;
          if (ack.result() == meridian::v1::Ack::RESULT_DUPLICATE) {
            ++duplicates;
          }
          local.push_back(std::chrono::duration<double, std::milli>(
                              Clock::now() - sent[done])
                              .count());
          ++done;
        }
        stream->WritesDone();
        grpc::Status status = stream->Finish();
        if (done < mine.size()) {
          ++retries;
          int64_t wait_ms = 100;
          auto it = context.GetServerTrailingMetadata().find("retry-after-ms");
          if (it != context.GetServerTrailingMetadata().end()) {
            absl::SimpleAtoi(
                absl::string_view(it->second.data(), it->second.size()),
                &wait_ms);
          }
          // Backoff as the agent does (not synchronisation).
          std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
        }
      }
      if (done < mine.size()) ++failures;
      std::lock_guard<std::mutex> lock(mu);
      latencies_ms.insert(latencies_ms.end(), local.begin(), local.end());
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(Clock::now() - begin).count();
  const int64_t peak_kib = PeakRssKib(collector->pid());
  const int64_t cgroup_peak =
      cgroup.empty() ? -1 : ReadNumber(cgroup + "/memory.max_usage_in_bytes");
  const int64_t oom =
      cgroup.empty() ? -1 : ReadNumber(cgroup + "/memory.failcnt");
  const int status = collector->Terminate();
  if (!cgroup.empty()) rmdir(cgroup.c_str());

  auto store = meridian::Store::Open(db);
  int64_t stored = -1;
  if (store.ok()) {
    auto catalog = (*store)->LoadCatalog("load");
    if (catalog.ok()) stored = catalog->job.spans;
  }
  const int64_t expected = int64_t{agents} * batches * spans;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  auto pct = [&](double p) {
    return latencies_ms.empty()
               ? 0.0
               : latencies_ms[std::min(
                     latencies_ms.size() - 1,
                     static_cast<size_t>(p * latencies_ms.size()))];
  };
  printf(
      "%d agents x %d batches x %d spans in %.1f s: %lld of %lld spans "
      "stored, %lld agents failed, %lld retries, %lld duplicates\n",
      agents, batches, spans, seconds, static_cast<long long>(stored),
      static_cast<long long>(expected), static_cast<long long>(failures.load()),
      static_cast<long long>(retries.load()),
      static_cast<long long>(duplicates.load()));
  printf(
      "collector peak RSS %.0f MiB; its memory cgroup's peak (page cache "
      "included) %.0f MiB of a %lld MiB cap%s, reached %lld times; ack "
      "latency p50 %.1f ms, p99 %.1f ms, max %.1f ms; exit status %d\n",
      peak_kib / 1024.0, cgroup_peak / 1048576.0,
      static_cast<long long>(cap_mib),
      cgroup.empty() ? " (NOT enforced: no memory cgroup)" : "",
      static_cast<long long>(oom), pct(0.5), pct(0.99),
      latencies_ms.empty() ? 0.0 : latencies_ms.back(), WEXITSTATUS(status));
  printf(
      "{\"bench\": \"load\", \"agents\": %d, \"spans\": %lld, "
      "\"stored\": %lld, \"seconds\": %.2f, \"peak_rss_mib\": %.0f, "
      "\"cgroup_peak_mib\": %.0f, \"memory_cap_mib\": %lld, \"cap_enforced\": "
      "%s, \"ack_p50_ms\": %.2f, \"ack_p99_ms\": %.2f, \"retries\": %lld, "
      "\"failed_agents\": %lld}\n",
      agents, static_cast<long long>(expected), static_cast<long long>(stored),
      seconds, peak_kib / 1024.0, cgroup_peak / 1048576.0,
      static_cast<long long>(cap_mib), cgroup.empty() ? "false" : "true",
      pct(0.5), pct(0.99), static_cast<long long>(retries.load()),
      static_cast<long long>(failures.load()));
  return stored == expected && failures.load() == 0 ? 0 : 1;
}
