#include "agent/node_counters.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

std::map<std::string, double> ByName(const std::vector<NodeCounter>& v) {
  std::map<std::string, double> m;
  for (const NodeCounter& c : v) m[c.name] = c.value;
  return m;
}

TEST(ParseProcStatTest, SumsTheAggregateLine) {
  auto t = ParseProcStat(
      "cpu  100 5 20 1000 7 1 2 3 40 0\ncpu0 1 1 1 1 1 1 1 1 1 1\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->busy, 131u);  // user nice system irq softirq steal
  EXPECT_EQ(t->iowait, 7u);
  EXPECT_EQ(t->steal, 3u);
  EXPECT_EQ(t->total, 1138u);  // busy + idle + iowait; guest is in user
}

TEST(ParseProcStatTest, RefusesWhatIsNotTheLine) {
  EXPECT_FALSE(ParseProcStat("").has_value());
  EXPECT_FALSE(ParseProcStat("cpu 1 2 3").has_value());
  EXPECT_FALSE(ParseProcStat("cpu0 1 2 3 4 5 6 7 8").has_value());
  EXPECT_FALSE(ParseProcStat("cpu 1 2 3 4 -5 6 7 8").has_value());
  EXPECT_FALSE(ParseProcStat("cpu 1 2 x 4 5 6 7 8").has_value());
  EXPECT_FALSE(
      ParseProcStat("cpu 18446744073709551615 1 0 0 0 0 0 0").has_value());
}

TEST(ParseMeminfoTest, TotalAndAvailableInBytes) {
  auto m = ParseMeminfo(
      "MemTotal:       2048 kB\nMemFree:    1 kB\nMemAvailable:   1024 kB\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->total_bytes, 2097152u);
  EXPECT_EQ(m->available_bytes, 1048576u);
  EXPECT_FALSE(ParseMeminfo("MemTotal: 2048 kB\n").has_value());
  EXPECT_FALSE(
      ParseMeminfo("MemTotal: 1 kB\nMemAvailable: 2 kB\n").has_value());
  EXPECT_FALSE(ParseMeminfo("MemTotal: 18446744073709551615 kB\n"
                            "MemAvailable: 1 kB\n")
                   .has_value());
}

TEST(ParseCounterFileTest, OneUnsignedDecimal) {
  EXPECT_EQ(ParseCounterFile("123\n"), 123u);
  EXPECT_EQ(ParseCounterFile("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseCounterFile("").has_value());
  EXPECT_FALSE(ParseCounterFile("\n").has_value());
  EXPECT_FALSE(ParseCounterFile("-1\n").has_value());
  EXPECT_FALSE(ParseCounterFile("+1").has_value());
  EXPECT_FALSE(ParseCounterFile("12a\n").has_value());
  EXPECT_FALSE(ParseCounterFile("18446744073709551616").has_value());
}

TEST(IsCounterNamePartTest, KernelNamesOnly) {
  EXPECT_TRUE(IsCounterNamePart("eth0"));
  EXPECT_TRUE(IsCounterNamePart("mlx5_0"));
  EXPECT_TRUE(IsCounterNamePart("enp1s0f0.100"));
  EXPECT_FALSE(IsCounterNamePart(""));
  EXPECT_FALSE(IsCounterNamePart("a/b"));
  EXPECT_FALSE(IsCounterNamePart("a b"));
  EXPECT_FALSE(IsCounterNamePart("x\n"));
  EXPECT_FALSE(IsCounterNamePart(std::string(33, 'a')));
}

// A /proc and /sys of the test's own, with values it sets.
class FakeNode {
 public:
  FakeNode() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    root_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/node-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (const char* dir :
         {"", "/proc", "/sys", "/sys/class", "/sys/class/net",
          "/sys/class/net/lo", "/sys/class/net/lo/statistics",
          "/sys/class/net/eth0", "/sys/class/net/eth0/statistics",
          "/sys/class/net/bad name", "/sys/class/net/bad name/statistics"}) {
      mkdir((root_ + dir).c_str(), 0700);
    }
  }
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(root_ + path) << text;
  }
  void Nic(const std::string& nic, int rx, int tx, int rx_errors,
           int tx_errors) {
    const std::string dir = "/sys/class/net/" + nic + "/statistics/";
    Write(dir + "rx_bytes", std::to_string(rx) + "\n");
    Write(dir + "tx_bytes", std::to_string(tx) + "\n");
    Write(dir + "rx_errors", std::to_string(rx_errors) + "\n");
    Write(dir + "tx_errors", std::to_string(tx_errors) + "\n");
  }
  void Infiniband() {
    for (const char* dir :
         {"/sys/class/infiniband", "/sys/class/infiniband/mlx5_0",
          "/sys/class/infiniband/mlx5_0/ports",
          "/sys/class/infiniband/mlx5_0/ports/1",
          "/sys/class/infiniband/mlx5_0/ports/1/counters"}) {
      mkdir((root_ + dir).c_str(), 0700);
    }
  }
  void Port(int rcv_words, int xmit_words, int symbol, int rcv_errors) {
    const std::string dir = "/sys/class/infiniband/mlx5_0/ports/1/counters/";
    Write(dir + "port_rcv_data", std::to_string(rcv_words));
    Write(dir + "port_xmit_data", std::to_string(xmit_words));
    Write(dir + "symbol_error", std::to_string(symbol));
    Write(dir + "port_rcv_errors", std::to_string(rcv_errors));
  }
  NodeCounterReader::Options Options() const {
    return {root_ + "/proc", root_ + "/sys", /*nvml=*/false};
  }

 private:
  std::string root_;
};

TEST(NodeCounterReaderTest, LevelsAtOnceRatesFromTheSecondSample) {
  FakeNode node;
  node.Write("/proc/stat", "cpu  100 0 100 700 100 0 0 0 0 0\n");
  node.Write("/proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 250 kB\n");
  node.Nic("lo", 5, 5, 0, 0);
  node.Nic("eth0", 1000, 2000, 1, 1);
  node.Nic("bad name", 1, 1, 0, 0);
  NodeCounterReader reader(node.Options());
  EXPECT_EQ(ByName(reader.Sample(1000000000)),
            (std::map<std::string, double>{{"mem.available_bytes", 256000},
                                           {"mem.used_bytes", 768000}}));
  ASSERT_EQ(reader.skipped().size(), 2u);
  EXPECT_EQ(reader.skipped()[0], "nvml: off");
  EXPECT_EQ(reader.skipped()[1].rfind("infiniband: no device in ", 0), 0u);

  // 2 s later: 1000 ticks more, of which 400 busy (100 of it steal) and
  // 100 waiting for I/O; eth0 received 4000 bytes and had 6 errors.
  node.Write("/proc/stat", "cpu  400 0 100 1200 200 0 0 100 0 0\n");
  node.Nic("eth0", 5000, 2000, 3, 5);
  node.Nic("lo", 9, 9, 0, 0);
  EXPECT_EQ(ByName(reader.Sample(3000000000)),
            (std::map<std::string, double>{{"cpu.busy_percent", 40},
                                           {"cpu.iowait_percent", 10},
                                           {"cpu.steal_percent", 10},
                                           {"mem.available_bytes", 256000},
                                           {"mem.used_bytes", 768000},
                                           {"net.eth0.errors_per_s", 3},
                                           {"net.eth0.rx_bytes_per_s", 2000},
                                           {"net.eth0.tx_bytes_per_s", 0}}));

  // A counter that went backwards (a reset) gives no rate this time; an
  // unreadable file leaves its counters out.
  node.Nic("eth0", 10, 4000, 3, 5);
  node.Write("/proc/meminfo", "garbage\n");
  EXPECT_EQ(ByName(reader.Sample(4000000000)),
            (std::map<std::string, double>{{"net.eth0.errors_per_s", 0},
                                           {"net.eth0.tx_bytes_per_s", 2000}}));
}

TEST(NodeCounterReaderTest, InfinibandPortsInBytes) {
  FakeNode node;
  node.Infiniband();
  node.Port(100, 200, 0, 0);
  NodeCounterReader reader(node.Options());
  EXPECT_TRUE(reader.Sample(1000000000).empty());
  ASSERT_EQ(reader.skipped(), std::vector<std::string>{"nvml: off"});
  node.Port(600, 200, 2, 1);
  EXPECT_EQ(ByName(reader.Sample(2000000000)),
            (std::map<std::string, double>{{"ib.mlx5_0.1.errors_per_s", 3},
                                           {"ib.mlx5_0.1.rx_bytes_per_s", 2000},
                                           {"ib.mlx5_0.1.tx_bytes_per_s", 0}}));
}

// The interfaces but lo, with their byte counters.
std::vector<std::string> Interfaces() {
  std::vector<std::string> nics;
  DIR* d = opendir("/sys/class/net");
  if (d == nullptr) return nics;
  while (const dirent* e = readdir(d)) {
    const std::string nic = e->d_name;
    struct stat st;
    if (nic == "lo" || !IsCounterNamePart(nic) ||
        stat(("/sys/class/net/" + nic + "/statistics/rx_bytes").c_str(), &st) !=
            0) {
      continue;
    }
    nics.push_back(nic);
  }
  closedir(d);
  return nics;
}

// This machine's own readings: CPU and memory are always there; each
// interface but lo has its rates; NVML and InfiniBand are read where
// present, skipped with the reason where not.
TEST(NodeCounterReaderTest, ThisMachine) {
  NodeCounterReader reader({});
  reader.Sample(1000000000);
  // The kernel's CPU times move in ticks (USER_HZ): sample until one passed.
  std::map<std::string, double> now;
  for (int64_t ns = 2000000000; now.count("cpu.busy_percent") == 0;
       ns += 1000000000) {
    ASSERT_LT(ns, int64_t{1000} * 1000000000) << "/proc/stat never moved";
    now = ByName(reader.Sample(ns));
  }
  ASSERT_EQ(now.count("cpu.busy_percent"), 1u);
  EXPECT_GE(now["cpu.busy_percent"], 0);
  EXPECT_LE(now["cpu.busy_percent"], 100);
  EXPECT_GT(now["mem.used_bytes"], 0);
  EXPECT_GT(now["mem.available_bytes"], 0);
  for (const std::string& nic : Interfaces()) {
    EXPECT_EQ(now.count("net." + nic + ".rx_bytes_per_s"), 1u) << nic;
    EXPECT_EQ(now.count("net." + nic + ".tx_bytes_per_s"), 1u) << nic;
  }
  EXPECT_EQ(now.count("net.lo.rx_bytes_per_s"), 0u);
  bool nvml = true, infiniband = true;
  for (const std::string& why : reader.skipped()) {
    std::cout << "skipped: " << why << "\n";
    nvml &= why.rfind("nvml: ", 0) != 0;
    infiniband &= why.rfind("infiniband: ", 0) != 0;
  }
  if (nvml) {
    EXPECT_EQ(now.count("gpu0.sm_percent"), 1u);
  }
  if (infiniband) {
    bool any = false;
    for (const auto& [name, value] : now) any |= name.rfind("ib.", 0) == 0;
    EXPECT_TRUE(any);
  }
}

}  // namespace
}  // namespace meridian
