// NodeCounters: the node's own readings, sampled by the agent beside the
// spans (docs/agent.md, "Node counters"): so that a slowdown can be put
// down to the CPU, memory, network or GPU it came with.
//
// Each Sample() reads:
//   cpu.busy_percent, cpu.iowait_percent, cpu.steal_percent
//       /proc/stat's first line: shares of the CPU time since the last
//       sample (from the second sample on)
//   mem.used_bytes, mem.available_bytes
//       /proc/meminfo: MemTotal - MemAvailable, MemAvailable
//   net.IF.rx_bytes_per_s, net.IF.tx_bytes_per_s, net.IF.errors_per_s
//       /sys/class/net/IF/statistics/{rx,tx}_{bytes,errors}, every
//       interface but lo (from the second sample on)
//   ib.DEV.PORT.rx_bytes_per_s, ib.DEV.PORT.tx_bytes_per_s,
//   ib.DEV.PORT.errors_per_s
//       /sys/class/infiniband/DEV/ports/PORT/counters: port_rcv_data and
//       port_xmit_data (in 4-byte words), symbol_error + port_rcv_errors
//   gpuN.sm_percent, gpuN.memory_percent, gpuN.sm_clock_mhz,
//   gpuN.temperature_c, gpuN.power_w, gpuN.throttle_reasons
//       NVML (libnvidia-ml.so.1, loaded at run time where present)
// A source that is not there (no InfiniBand, no NVML) is skipped, and
// skipped() says why; a file that cannot be read or parsed at a sample
// leaves its counters out of that sample. A cumulative counter that went
// backwards (a reset, a device that came back) gives no rate for that
// sample.
//
// Bounds: at most kMaxDevices interfaces, ports and GPUs each; names are
// the kernel's, kept only when made of [A-Za-z0-9_.:-] and at most 32
// bytes. Not thread-safe.
#ifndef MERIDIAN_AGENT_NODE_COUNTERS_H_
#define MERIDIAN_AGENT_NODE_COUNTERS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace meridian {

struct NodeCounter {
  std::string name;
  double value = 0;
};

// /proc/stat's aggregate "cpu" line, in clock ticks.
struct CpuTimes {
  uint64_t busy = 0;  // user + nice + system + irq + softirq + steal
  uint64_t iowait = 0;
  uint64_t steal = 0;
  uint64_t total = 0;  // busy + idle + iowait
};
std::optional<CpuTimes> ParseProcStat(absl::string_view text);

struct MemInfo {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
};
std::optional<MemInfo> ParseMeminfo(absl::string_view text);

// A sysfs counter file: one unsigned decimal, then a newline or nothing.
std::optional<uint64_t> ParseCounterFile(absl::string_view text);

// Whether `name` (an interface, device or port from a directory listing)
// may become part of a counter's name.
bool IsCounterNamePart(absl::string_view name);

class NodeCounterReader {
 public:
  static constexpr size_t kMaxDevices = 64;

  struct Options {
    std::string proc = "/proc";
    std::string sys = "/sys";
    bool nvml = true;  // false: never load NVML
  };
  explicit NodeCounterReader(Options options);
  ~NodeCounterReader();

  // The counters now; `now_ns` (any monotone clock) makes the rates.
  std::vector<NodeCounter> Sample(int64_t now_ns);
  // The sources skipped, each with why ("nvml: ..."), as of the last
  // Sample().
  const std::vector<std::string>& skipped() const { return skipped_; }

 private:
  class Nvml;
  // Cumulative values of the last sample, by counter name.
  struct Last {
    int64_t ns = 0;
    std::map<std::string, uint64_t> totals;
  };
  void AddCpu(std::vector<NodeCounter>* out);
  void AddMemory(std::vector<NodeCounter>* out);
  void AddNet(std::vector<NodeCounter>* out);
  void AddInfiniband(std::vector<NodeCounter>* out);
  // A rate counter `name` from the cumulative `total` (scaled by `scale`),
  // from the second sample on.
  void AddRate(const std::string& name, uint64_t total, double scale,
               std::vector<NodeCounter>* out);

  Options options_;
  std::unique_ptr<Nvml> nvml_;
  std::vector<std::string> skipped_;
  std::optional<CpuTimes> last_cpu_;
  Last last_;
  std::map<std::string, uint64_t> totals_;  // this sample's
  double seconds_ = 0;  // since the last sample; 0 at the first
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_NODE_COUNTERS_H_
