#include "common/memory.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// Resident bytes of this process (/proc/self/statm).
long ResidentBytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (f == nullptr || fscanf(f, "%ld %ld", &size, &resident) != 2)
    resident = -1;
  if (f != nullptr) fclose(f);
  return resident * sysconf(_SC_PAGESIZE);
}

constexpr long kMiB = 1 << 20;

// 64 MiB in 1 KiB blocks (below the mmap threshold: from the heap), all
// written, then freed but the last: glibc cannot shrink the heap past a
// block still in use at its top, so the freed pages stay resident until
// returned.
TEST(MemoryTest, FreedHeapPagesGoBackToTheSystem) {
  std::vector<std::unique_ptr<char[]>> blocks(64 * 1024);
  for (auto& b : blocks) {
    b.reset(new char[1024]);
    for (int i = 0; i < 1024; i += 512) b[i] = 1;
  }
  const long full = ResidentBytes();
  ASSERT_GT(full, 64 * kMiB);
  for (size_t i = 0; i + 1 < blocks.size(); ++i) blocks[i].reset();
  const long freed = ResidentBytes();
  EXPECT_GT(freed, full - 8 * kMiB);  // still held by the heap
  ReturnFreedMemory();
  EXPECT_LT(ResidentBytes(), freed - 56 * kMiB);
}

TEST(MemoryTest, ReturnsFreedMemoryRunsAfterTheMembersDeclaredAfterIt) {
  struct Holder {
    ReturnsFreedMemory returns;
    std::vector<std::unique_ptr<char[]>> blocks;
  };
  std::unique_ptr<char[]> top;  // outlives the holder, above its blocks
  long held = 0;
  {
    Holder h;
    h.blocks.resize(64 * 1024);
    for (auto& b : h.blocks) {
      b.reset(new char[1024]);
      for (int i = 0; i < 1024; i += 512) b[i] = 1;
    }
    top.reset(new char[1024]);
    held = ResidentBytes();
  }
  EXPECT_LT(ResidentBytes(), held - 56 * kMiB);
}

}  // namespace
}  // namespace meridian
