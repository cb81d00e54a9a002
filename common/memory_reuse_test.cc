// ReuseFreedMemory changes the whole process's heap, so it has a test
// binary of its own (memory_test's checks rely on glibc's defaults).
#include <sys/resource.h>

#include <memory>

#include "common/memory.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

long MinorFaults() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Pages first touched while writing a fresh 8 MiB block.
long FaultsOfABlock() {
  constexpr size_t kBytes = 8 << 20;
  const long before = MinorFaults();
  std::unique_ptr<char[]> block(new char[kBytes]);
  volatile char* bytes = block.get();  // written, not optimised away
  for (size_t i = 0; i < kBytes; i += 4096) bytes[i] = 1;
  return MinorFaults() - before;
}

// 8 MiB is over glibc's default mmap threshold: by default each such block
// is mapped and unmapped, and every one of its 2,048 pages faults in again.
// Kept in the heap, the second block is the first one's pages.
TEST(MemoryReuseTest, AFreedBlockIsReusedWithoutFaultingItsPagesIn) {
  ASSERT_TRUE(ReuseFreedMemory());
  const long first = FaultsOfABlock();
  EXPECT_GT(first, (8 << 20) >> 12 >> 3);  // at least an eighth of its pages
  EXPECT_LT(FaultsOfABlock(), 64);
  // What is free still goes back when asked (ReturnFreedMemory).
  ReturnFreedMemory();
  EXPECT_GT(FaultsOfABlock(), (8 << 20) >> 12 >> 3);
}

}  // namespace
}  // namespace meridian
