// libmeridian_nvtx.so loaded by NVTX's own loader, as in a traced program:
// NVTX_INJECTION64_PATH is set before the first NVTX call, then the program
// calls NVTX (the toolkit's nvtx3 headers), recording into a stand-in for
// libmeridian_probe.so (fake_capture_abi.h).
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/fake_capture_abi.h"

namespace {

TEST(NvtxInjectionTest, NvtxLoadsTheLibraryAndItsCallsBecomeSpans) {
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  const std::string library =
      std::string(cwd) + "/capture/nvtx/libmeridian_nvtx.so";
  ASSERT_EQ(access(library.c_str(), R_OK), 0) << library;
  setenv("NVTX_INJECTION64_PATH", library.c_str(), 1);
  meridian::fake_capture::SetClock(0, 10);  // +10 ns per read

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

  const std::vector<meridian::ProbeRecord> records =
      meridian::fake_capture::Records();
  ASSERT_EQ(records.size(), 5u);
  std::vector<std::string> names;
  for (const meridian::ProbeRecord& r : records)
    names.push_back(meridian::fake_capture::NameOf(r.name));
  EXPECT_EQ(names,
            (std::vector<std::string>{"checkpoint", "forward", "io",
                                      "thread name: main loop", "step"}));
  EXPECT_EQ(records[1].category, 8);  // NVTX
  EXPECT_EQ(meridian::fake_capture::NameOf(records[1].args), "domain=Megatron");
  EXPECT_EQ(records[1].dur_ns, 20);  // the clock ticks 10 ns per read
  EXPECT_EQ(records[0].kind, 1);     // the mark: an instant
  EXPECT_EQ(records[4].start_ns, 10);
  EXPECT_EQ(records[4].dur_ns, 70);  // step encloses everything
}

}  // namespace
