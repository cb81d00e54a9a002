#include "agent/node_counters.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace meridian {
namespace {

constexpr size_t kMaxNameBytes = 32;
constexpr size_t kMaxFileBytes = 8192;  // the lines read are at the start

// The file's first kMaxFileBytes, or nothing.
std::optional<std::string> ReadSmallFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text(kMaxFileBytes, '\0');
  size_t size = 0;
  while (size < text.size()) {
    const ssize_t n = read(fd, &text[size], text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(size);
  return text;
}

std::optional<uint64_t> ReadCounterFile(const std::string& path) {
  std::optional<std::string> text = ReadSmallFile(path);
  if (!text) return std::nullopt;
  return ParseCounterFile(*text);
}

// The entries of `dir` that may name a counter, sorted, at most
// kMaxDevices; nothing if it cannot be listed.
std::vector<std::string> ListNames(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = readdir(d)) {
    const absl::string_view name = e->d_name;
    if (name == "." || name == ".." || !IsCounterNamePart(name)) continue;
    names.emplace_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  if (names.size() > NodeCounterReader::kMaxDevices) {
    names.resize(NodeCounterReader::kMaxDevices);
  }
  return names;
}

bool ParseU64(absl::string_view field, uint64_t* out) {
  return absl::SimpleAtoi(field, out);
}

}  // namespace

std::optional<CpuTimes> ParseProcStat(absl::string_view text) {
  const absl::string_view line = text.substr(0, text.find('\n'));
  std::vector<absl::string_view> fields =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  // cpu user nice system idle iowait irq softirq steal [guest guest_nice]:
  // guest time is already counted in user and nice.
  if (fields.size() < 9 || fields[0] != "cpu") return std::nullopt;
  uint64_t v[8];
  for (int i = 0; i < 8; ++i) {
    if (!ParseU64(fields[i + 1], &v[i])) return std::nullopt;
  }
  CpuTimes t;
  const uint64_t parts[] = {v[0], v[1], v[2], v[5], v[6], v[7]};
  for (uint64_t part : parts) {
    if (__builtin_add_overflow(t.busy, part, &t.busy)) return std::nullopt;
  }
  t.iowait = v[4];
  t.steal = v[7];
  if (__builtin_add_overflow(t.busy, v[3], &t.total) ||
      __builtin_add_overflow(t.total, v[4], &t.total)) {
    return std::nullopt;
  }
  return t;
}

std::optional<MemInfo> ParseMeminfo(absl::string_view text) {
  // "MemTotal:       24588304 kB"
  std::optional<uint64_t> total, available;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() != 3 || fields[2] != "kB") continue;
    uint64_t kib;
    if (!ParseU64(fields[1], &kib) || kib > (UINT64_MAX >> 10)) continue;
    if (fields[0] == "MemTotal:") total = kib << 10;
    if (fields[0] == "MemAvailable:") available = kib << 10;
  }
  if (!total || !available || *available > *total) return std::nullopt;
  return MemInfo{*total, *available};
}

std::optional<uint64_t> ParseCounterFile(absl::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  uint64_t value;
  if (text.empty() || text.size() > 20 ||
      !std::all_of(text.begin(), text.end(), absl::ascii_isdigit) ||
      !ParseU64(text, &value)) {
    return std::nullopt;
  }
  return value;
}

bool IsCounterNamePart(absl::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == ':' ||
           c == '-';
  });
}

// NVML, loaded with dlopen so that the agent runs (and builds) without a
// driver; the declarations are NVML's C ABI (nvml.h).
class NodeCounterReader::Nvml {
 public:
  // Null, with `why`, where NVML is not there or does not start.
  static std::unique_ptr<Nvml> Load(std::string* why) {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      *why = absl::StrCat("nvml: ", dlerror());
      return nullptr;
    }
    std::unique_ptr<Nvml> nvml(new Nvml(lib));
    if (!nvml->Bind()) {
      *why = "nvml: libnvidia-ml.so.1 lacks a function it needs";
      return nullptr;
    }
    if (int rc = nvml->init_(); rc != 0) {
      *why = absl::StrCat("nvml: nvmlInit_v2 returned ", rc);
      return nullptr;
    }
    nvml->started_ = true;
    unsigned count = 0;
    if (nvml->count_(&count) != 0) count = 0;
    count = std::min<unsigned>(count, kMaxDevices);
    for (unsigned i = 0; i < count; ++i) {
      void* device = nullptr;
      if (nvml->handle_(i, &device) == 0) nvml->devices_.push_back(device);
    }
    if (nvml->devices_.empty()) {
      *why = "nvml: no GPU";
      return nullptr;
    }
    return nvml;
  }
  ~Nvml() {
    if (started_) shutdown_();
    dlclose(lib_);
  }

  void Add(std::vector<NodeCounter>* out) const {
    for (size_t i = 0; i < devices_.size(); ++i) {
      void* d = devices_[i];
      const std::string gpu = absl::StrCat("gpu", i, ".");
      struct {
        unsigned gpu, memory;
      } utilization;
      if (utilization_(d, &utilization) == 0) {
        out->push_back({gpu + "sm_percent", double(utilization.gpu)});
        out->push_back({gpu + "memory_percent", double(utilization.memory)});
      }
      unsigned value = 0;
      if (clock_(d, /*NVML_CLOCK_SM=*/1, &value) == 0) {
        out->push_back({gpu + "sm_clock_mhz", double(value)});
      }
      if (temperature_(d, /*NVML_TEMPERATURE_GPU=*/0, &value) == 0) {
        out->push_back({gpu + "temperature_c", double(value)});
      }
      if (power_(d, &value) == 0) {  // milliwatts
        out->push_back({gpu + "power_w", value / 1000.0});
      }
      unsigned long long reasons = 0;  // NOLINT(runtime/int): NVML's type
      if (throttle_(d, &reasons) == 0) {
        out->push_back({gpu + "throttle_reasons", double(reasons)});
      }
    }
  }

 private:
  explicit Nvml(void* lib) : lib_(lib) {}
  template <typename F>
  bool Find(const char* name, F* f) {
    *f = reinterpret_cast<F>(dlsym(lib_, name));
    return *f != nullptr;
  }
  bool Bind() {
    return Find("nvmlInit_v2", &init_) && Find("nvmlShutdown", &shutdown_) &&
           Find("nvmlDeviceGetCount_v2", &count_) &&
           Find("nvmlDeviceGetHandleByIndex_v2", &handle_) &&
           Find("nvmlDeviceGetUtilizationRates", &utilization_) &&
           Find("nvmlDeviceGetClockInfo", &clock_) &&
           Find("nvmlDeviceGetTemperature", &temperature_) &&
           Find("nvmlDeviceGetPowerUsage", &power_) &&
           Find("nvmlDeviceGetCurrentClocksThrottleReasons", &throttle_);
  }

  void* lib_;
  bool started_ = false;
  std::vector<void*> devices_;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  int (*count_)(unsigned*) = nullptr;
  int (*handle_)(unsigned, void**) = nullptr;
  int (*utilization_)(void*, void*) = nullptr;
  int (*clock_)(void*, int, unsigned*) = nullptr;
  int (*temperature_)(void*, int, unsigned*) = nullptr;
  int (*power_)(void*, unsigned*) = nullptr;
  int (*throttle_)(void*, unsigned long long*) = nullptr;  // NOLINT
};

NodeCounterReader::NodeCounterReader(Options options)
    : options_(std::move(options)) {
  std::string why = "nvml: off";
  if (options_.nvml) nvml_ = Nvml::Load(&why);
  if (nvml_ == nullptr) skipped_.push_back(why);
}

NodeCounterReader::~NodeCounterReader() = default;

std::vector<NodeCounter> NodeCounterReader::Sample(int64_t now_ns) {
  std::vector<NodeCounter> out;
  seconds_ = last_.ns > 0 && now_ns > last_.ns ? (now_ns - last_.ns) / 1e9 : 0;
  totals_.clear();
  skipped_.resize(nvml_ == nullptr ? 1 : 0);
  AddCpu(&out);
  AddMemory(&out);
  AddNet(&out);
  AddInfiniband(&out);
  if (nvml_ != nullptr) nvml_->Add(&out);
  last_.ns = now_ns;
  last_.totals = std::move(totals_);
  totals_ = {};
  return out;
}

void NodeCounterReader::AddCpu(std::vector<NodeCounter>* out) {
  std::optional<std::string> text = ReadSmallFile(options_.proc + "/stat");
  std::optional<CpuTimes> now = text ? ParseProcStat(*text) : std::nullopt;
  if (!now) return;
  const std::optional<CpuTimes> last = std::exchange(last_cpu_, now);
  if (!last || now->total <= last->total || now->busy < last->busy ||
      now->iowait < last->iowait || now->steal < last->steal) {
    return;
  }
  const double ticks = now->total - last->total;
  out->push_back(
      {"cpu.busy_percent", 100.0 * (now->busy - last->busy) / ticks});
  out->push_back(
      {"cpu.iowait_percent", 100.0 * (now->iowait - last->iowait) / ticks});
  out->push_back(
      {"cpu.steal_percent", 100.0 * (now->steal - last->steal) / ticks});
}

void NodeCounterReader::AddMemory(std::vector<NodeCounter>* out) {
  std::optional<std::string> text = ReadSmallFile(options_.proc + "/meminfo");
  std::optional<MemInfo> mem = text ? ParseMeminfo(*text) : std::nullopt;
  if (!mem) return;
  out->push_back(
      {"mem.used_bytes", double(mem->total_bytes - mem->available_bytes)});
  out->push_back({"mem.available_bytes", double(mem->available_bytes)});
}

void NodeCounterReader::AddRate(const std::string& name, uint64_t total,
                                double scale, std::vector<NodeCounter>* out) {
  totals_[name] = total;
  auto last = last_.totals.find(name);
  if (seconds_ <= 0 || last == last_.totals.end() || total < last->second) {
    return;
  }
  out->push_back({name, (total - last->second) * scale / seconds_});
}

void NodeCounterReader::AddNet(std::vector<NodeCounter>* out) {
  const std::string dir = options_.sys + "/class/net/";
  for (const std::string& nic : ListNames(dir)) {
    if (nic == "lo") continue;
    const std::string stats = dir + nic + "/statistics/";
    std::optional<uint64_t> rx = ReadCounterFile(stats + "rx_bytes");
    std::optional<uint64_t> tx = ReadCounterFile(stats + "tx_bytes");
    std::optional<uint64_t> rx_errors = ReadCounterFile(stats + "rx_errors");
    std::optional<uint64_t> tx_errors = ReadCounterFile(stats + "tx_errors");
    const std::string name = "net." + nic + ".";
    if (rx) AddRate(name + "rx_bytes_per_s", *rx, 1, out);
    if (tx) AddRate(name + "tx_bytes_per_s", *tx, 1, out);
    if (rx_errors && tx_errors && *rx_errors <= UINT64_MAX - *tx_errors) {
      AddRate(name + "errors_per_s", *rx_errors + *tx_errors, 1, out);
    }
  }
}

void NodeCounterReader::AddInfiniband(std::vector<NodeCounter>* out) {
  const std::string dir = options_.sys + "/class/infiniband/";
  std::vector<std::string> devices = ListNames(dir);
  if (devices.empty()) {
    skipped_.push_back("infiniband: no device in " + dir);
    return;
  }
  size_t ports_read = 0;
  for (const std::string& device : devices) {
    for (const std::string& port : ListNames(dir + device + "/ports")) {
      if (++ports_read > kMaxDevices) return;
      const std::string counters =
          dir + device + "/ports/" + port + "/counters/";
      const std::string name = "ib." + device + "." + port + ".";
      // The data counters count 4-byte words (one per lane).
      if (auto rx = ReadCounterFile(counters + "port_rcv_data")) {
        AddRate(name + "rx_bytes_per_s", *rx, 4, out);
      }
      if (auto tx = ReadCounterFile(counters + "port_xmit_data")) {
        AddRate(name + "tx_bytes_per_s", *tx, 4, out);
      }
      auto symbol = ReadCounterFile(counters + "symbol_error");
      auto receive = ReadCounterFile(counters + "port_rcv_errors");
      if (symbol && receive && *symbol <= UINT64_MAX - *receive) {
        AddRate(name + "errors_per_s", *symbol + *receive, 1, out);
      }
    }
  }
}

}  // namespace meridian
