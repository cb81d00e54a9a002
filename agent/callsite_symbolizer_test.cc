#include "agent/callsite_symbolizer.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// A call site in this test, as the probe writes one (callsite.h).
__attribute__((noinline)) const void* ReturnAddress() {
  return __builtin_return_address(0);
}

std::string RawCallsite(const void* pc) {
  Dl_info info;
  link_map* map = nullptr;
  EXPECT_NE(dladdr1(pc, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP),
            0);
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = '\0';
  char raw[4200];
  snprintf(raw, sizeof(raw), "%s+0x%" PRIxPTR, exe,
           reinterpret_cast<uintptr_t>(pc) - map->l_addr);
  return raw;
}

const void* g_pc;
constexpr int kCallLine = __LINE__ + 1;
__attribute__((noinline)) void KnownCaller() { g_pc = ReturnAddress(); }

constexpr int kInlinedLine = __LINE__ + 1;
__attribute__((always_inline)) inline void Inlined() { g_pc = ReturnAddress(); }
// Does more than KnownCaller, which the compiler would otherwise fold it
// into.
volatile int g_inlined_calls = 0;
__attribute__((noinline)) void CallsInlined() {
  Inlined();
  g_inlined_calls = g_inlined_calls + 1;
}

TEST(CallsiteSymbolizerTest, NamesTheInlinedFunctionAtTheCall) {
  CallsInlined();
  CallsiteSymbolizer symbolizer;
  const std::string site = symbolizer.Symbolize(RawCallsite(g_pc));
  const std::string want = "Inlined at agent/callsite_symbolizer_test.cc:" +
                           std::to_string(kInlinedLine);
  EXPECT_EQ(site, want);
}

TEST(CallsiteSymbolizerTest, NamesTheFunctionFileAndLineOfTheCall) {
  KnownCaller();
  const std::string raw = RawCallsite(g_pc);
  CallsiteSymbolizer symbolizer;
  const std::string site = symbolizer.Symbolize(raw);
  const std::string want_function =
      "meridian::(anonymous namespace)::KnownCaller() at ";
  const std::string want_line =
      "agent/callsite_symbolizer_test.cc:" + std::to_string(kCallLine);
  ASSERT_GE(site.size(), want_function.size() + want_line.size()) << site;
  EXPECT_EQ(site.substr(0, want_function.size()), want_function) << site;
  EXPECT_EQ(site.substr(site.size() - want_line.size()), want_line) << site;

  // Cached: the object is read once, however often it is asked.
  EXPECT_EQ(symbolizer.Symbolize(raw), site);
  EXPECT_EQ(symbolizer.objects_read(), 1u);
}

TEST(CallsiteSymbolizerTest, WhatIsNoCallSiteGivesNothing) {
  CallsiteSymbolizer symbolizer;
  for (const char* raw : {"", "+0x10", "relative/prog+0x10", "/bin/true",
                          "/bin/true+0x", "/bin/true+0xzz", "/bin/true+0x0",
                          "/bin/true+0x11112222333344445", "/bin/true+0x-1"}) {
    EXPECT_EQ(symbolizer.Symbolize(raw), "") << raw;
  }
  EXPECT_EQ(symbolizer.Symbolize(std::string("/bin/tr\0ue+0x10", 15)), "");
  EXPECT_EQ(symbolizer.objects_read(), 0u);
}

TEST(CallsiteSymbolizerTest, WhatCannotBeReadStaysRaw) {
  char fifo[] = "/tmp/meridian-symbolizer-XXXXXX";
  ASSERT_NE(mkdtemp(fifo), nullptr);
  const std::string dir = fifo;
  const std::string pipe = dir + "/pipe";
  ASSERT_EQ(mkfifo(pipe.c_str(), 0600), 0);
  const std::string text = dir + "/text";
  FILE* f = fopen(text.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("not an object file\n", f);
  fclose(f);

  CallsiteSymbolizer symbolizer;
  // A FIFO, a device, a missing file: never opened, named as recorded.
  EXPECT_EQ(symbolizer.Symbolize(pipe + "+0x10"), pipe + "+0x10");
  EXPECT_EQ(symbolizer.Symbolize("/dev/zero+0x10"), "/dev/zero+0x10");
  EXPECT_EQ(symbolizer.Symbolize(dir + "/missing+0x10"), dir + "/missing+0x10");
  EXPECT_EQ(symbolizer.objects_read(), 0u);
  // A file that is no object: read, nothing found.
  EXPECT_EQ(symbolizer.Symbolize(text + "+0x10"), text + "+0x10");
  EXPECT_EQ(symbolizer.objects_read(), 1u);

  unlink(pipe.c_str());
  unlink(text.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace meridian
