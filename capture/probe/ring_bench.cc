// ring_bench: what one recorded event costs the traced thread in the
// probe's shared-memory ring (SpanRingWriter::Push), in ns, median over
// rounds. Each round pushes 10,000 records into a ring that has room; the
// ring is drained between rounds, outside the clock. The last line printed
// is one JSON object.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "abi/span_ring.h"

int main() {
  using meridian::ProbeRecord;
  constexpr uint64_t kCapacity = 1 << 16;
  constexpr int kPerRound = 10000;
  constexpr int kRounds = 301;
  const size_t bytes = meridian::SpanRingBytes(kCapacity);
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED || !meridian::InitSpanRing(memory, kCapacity)) {
    fprintf(stderr, "ring_bench: cannot map a ring\n");
    return 1;
  }
  meridian::SpanRingWriter writer(memory, bytes);
  meridian::SpanRingReader reader(memory, bytes);
  std::vector<ProbeRecord> drained(kCapacity);
  std::vector<double> ns_per_push;
  ProbeRecord record{};
  record.category = 1;
  record.bytes = 8;
  for (int round = 0; round < kRounds; ++round) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kPerRound; ++i) {
      record.start_ns = i;  // a changing value, as a clock reading would be
      writer.Push(record);
    }
    auto end = std::chrono::steady_clock::now();
    ns_per_push.push_back(
        std::chrono::duration<double, std::nano>(end - start).count() /
        kPerRound);
    reader.Drain(drained.data(), drained.size());
  }
  std::sort(ns_per_push.begin(), ns_per_push.end());
  double median = ns_per_push[ns_per_push.size() / 2];
  double p90 = ns_per_push[ns_per_push.size() * 9 / 10];
  printf("push: %.2f ns median, %.2f ns p90 per record (%d rounds of %d)\n",
         median, p90, kRounds, kPerRound);
  printf(
      "{\"ring_push_ns_median\":%.2f,\"ring_push_ns_p90\":%.2f,"
      "\"dropped\":%llu}\n",
      median, p90, static_cast<unsigned long long>(reader.dropped()));
  return 0;
}
