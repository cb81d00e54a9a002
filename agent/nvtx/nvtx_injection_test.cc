// libmeridian_nvtx.so loaded by NVTX's own loader, as in a traced program:
// NVTX_INJECTION64_PATH is set before the first NVTX call, then the program
// calls NVTX (the toolkit's nvtx3 headers). This test program stands in for
// libmeridian_probe.so: it defines the capture ABI the library finds.
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "agent/probe/capture_sink.h"
#include "gtest/gtest.h"

namespace {

std::mutex g_mutex;
std::vector<std::string> g_names;
std::vector<meridian::ProbeRecord> g_records;
int64_t g_now = 0;

std::string NameOf(uint32_t id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return id == 0 || id > g_names.size() ? "" : g_names[id - 1];
}

}  // namespace

extern "C" {
int meridian_capture_recording(void) { return 1; }
uint32_t meridian_capture_name(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (size_t i = 0; i < g_names.size(); ++i) {
    if (g_names[i] == name) return static_cast<uint32_t>(i + 1);
  }
  g_names.push_back(name);
  return static_cast<uint32_t>(g_names.size());
}
void meridian_capture_emit(const meridian::ProbeRecord* record, int) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_records.push_back(*record);
}
int64_t meridian_capture_now_ns(void) { return g_now += 10; }
int meridian_capture_step(int64_t*) { return 0; }
}

namespace {

TEST(NvtxInjectionTest, NvtxLoadsTheLibraryAndItsCallsBecomeSpans) {
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  const std::string library =
      std::string(cwd) + "/agent/nvtx/libmeridian_nvtx.so";
  ASSERT_EQ(access(library.c_str(), R_OK), 0) << library;
  setenv("NVTX_INJECTION64_PATH", library.c_str(), 1);

  nvtxRangePushA("step");  // NVTX initializes here and loads the library
  nvtxDomainHandle_t domain = nvtxDomainCreateA("Megatron");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "forward";
  nvtxDomainRangePushEx(domain, &a);
  nvtxMarkA("checkpoint");
  nvtxDomainRangePop(domain);
  nvtxRangeId_t io = nvtxRangeStartA("io");
  nvtxRangeEnd(io);
  nvtxNameOsThreadA(77, "main loop");
  nvtxRangePop();

  std::vector<meridian::ProbeRecord> records;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    records = g_records;
  }
  ASSERT_EQ(records.size(), 5u);
  std::vector<std::string> names;
  for (const meridian::ProbeRecord& r : records)
    names.push_back(NameOf(r.name));
  EXPECT_EQ(names,
            (std::vector<std::string>{"checkpoint", "forward", "io",
                                      "thread name: main loop", "step"}));
  EXPECT_EQ(g_records[1].category, 8);  // NVTX
  EXPECT_GT(g_records[1].dur_ns, 0);
  EXPECT_EQ(g_records[0].kind, 1);                      // the mark: an instant
  EXPECT_GT(g_records[4].dur_ns, g_records[1].dur_ns);  // step encloses
}

}  // namespace
