#include "capture/probe/callsite.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>

namespace meridian {
namespace probe {

__thread const void* tls_caller = nullptr;

namespace {

// Open addressing on the address, without locks: an inserter claims an
// empty slot (0 -> kBusy), stores the id and then publishes the address
// (release), so a reader that finds the address (acquire) finds the id.
// Entries are never removed (but at fork).
struct Entry {
  std::atomic<uintptr_t> pc;
  std::atomic<uint32_t> id;
};
constexpr uint32_t kTableSize = 2 * kMaxCallsites;  // a power of two
constexpr uint32_t kMaxProbes = 32;
constexpr uintptr_t kBusy = 1;  // a slot being filled
Entry g_table[kTableSize];

uint32_t Slot(uintptr_t pc) {
  return static_cast<uint32_t>((pc * 0x9E3779B97F4A7C15ULL) >> 40) &
         (kTableSize - 1);
}

// The interned "<path>+0x<address>" of `pc`, or 0 if no loaded object
// holds it. Slow: once per distinct address.
uint32_t Describe(const void* pc) {
  Dl_info info;
  link_map* map = nullptr;
  if (dladdr1(pc, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) ==
          0 ||
      map == nullptr) {
    return 0;
  }
  char path[PATH_MAX];
  const char* name = map->l_name;
  if (name == nullptr || name[0] == '\0') {  // the executable
    const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
  } else if (realpath(name, path) == nullptr) {
    snprintf(path, sizeof(path), "%s", name);
  }
  char text[PATH_MAX + 32];
  snprintf(text, sizeof(text), "%s+0x%" PRIxPTR, path,
           reinterpret_cast<uintptr_t>(pc) - map->l_addr);
  return Intern(text);
}

}  // namespace

uint32_t CallsiteId(const void* pc) {
  const uintptr_t key = reinterpret_cast<uintptr_t>(pc);
  if (key == 0 || key == kBusy) return 0;
  const uint32_t first = Slot(key);
  bool room = false;
  for (uint32_t i = 0; i < kMaxProbes && !room; ++i) {
    const Entry& e = g_table[(first + i) & (kTableSize - 1)];
    const uintptr_t at = e.pc.load(std::memory_order_acquire);
    if (at == key) return e.id.load(std::memory_order_relaxed);
    room = at == 0;
  }
  if (!room) return 0;  // this part of the table is full
  // New: described outside any lock (interning is idempotent, so two
  // threads describing one address get one id), then inserted by claiming
  // an empty slot. A second insert of the same address in a race takes a
  // later slot with the same id: harmless.
  const uint32_t id = Describe(pc);
  for (uint32_t i = 0; i < kMaxProbes; ++i) {
    Entry& e = g_table[(first + i) & (kTableSize - 1)];
    uintptr_t at = 0;
    if (e.pc.compare_exchange_strong(at, kBusy, std::memory_order_relaxed)) {
      e.id.store(id, std::memory_order_relaxed);
      e.pc.store(key, std::memory_order_release);
      return id;
    }
    if (at == key) return e.id.load(std::memory_order_relaxed);
  }
  return 0;  // filled meanwhile
}

void ResetCallsites() {
  for (Entry& e : g_table) {
    e.pc.store(0, std::memory_order_relaxed);
    e.id.store(0, std::memory_order_relaxed);
  }
}

}  // namespace probe
}  // namespace meridian
