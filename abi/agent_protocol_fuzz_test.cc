#include <cstring>
#include <string>
#include <vector>

#include "abi/agent_protocol.h"
#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

template <typename T>
std::string Bytes(const T& message) {
  return std::string(reinterpret_cast<const char*>(&message), sizeof(message));
}

std::vector<std::string> Seeds() {
  ProbeHello hello;
  hello.pid = 42;
  hello.region_bytes = 1 << 20;
  strcpy(hello.job, "job-a");
  TraceRequest trace;
  trace.steps = 5;
  strcpy(trace.job, "job-a");
  LauncherHello launcher;
  launcher.pid = 43;
  return {Bytes(hello), Bytes(ProbeIdentity()), Bytes(FlushRequest()),
          Bytes(trace), Bytes(launcher),        Bytes(DrainSoon())};
}

TEST(AgentProtocolTest, DecodesWhatClientsSendAndRefusesTheRest) {
  AgentRequest request;
  ProbeHello hello;
  memset(hello.job, 'x', sizeof(hello.job));  // no terminating NUL
  ASSERT_TRUE(DecodeAgentRequest(&hello, sizeof(hello), &request));
  EXPECT_EQ(strlen(request.hello.job), sizeof(hello.job) - 1);
  hello.version = kAgentProtocolVersion + 1;
  EXPECT_FALSE(DecodeAgentRequest(&hello, sizeof(hello), &request));
  EXPECT_FALSE(DecodeAgentRequest(&hello, sizeof(hello) - 1, &request));
  FlushRequest flush;
  EXPECT_TRUE(DecodeAgentRequest(&flush, sizeof(flush), &request));
  EXPECT_EQ(request.type, AgentMessage::kFlushRequest);
  LauncherHello launcher;
  launcher.pid = 43;
  ASSERT_TRUE(DecodeAgentRequest(&launcher, sizeof(launcher), &request));
  EXPECT_EQ(request.type, AgentMessage::kLauncherHello);
  EXPECT_EQ(request.launcher.pid, 43);
  launcher.version = kAgentProtocolVersion + 1;
  EXPECT_FALSE(DecodeAgentRequest(&launcher, sizeof(launcher), &request));
  EXPECT_FALSE(DecodeAgentRequest(&launcher, sizeof(launcher) + 1, &request));
  DrainSoon drain;
  EXPECT_TRUE(DecodeAgentRequest(&drain, sizeof(drain), &request));
  EXPECT_EQ(request.type, AgentMessage::kDrainSoon);
  EXPECT_FALSE(DecodeAgentRequest(&drain, sizeof(drain) - 1, &request));
  const uint32_t unknown = 99;
  EXPECT_FALSE(DecodeAgentRequest(&unknown, sizeof(unknown), &request));
  EXPECT_FALSE(DecodeAgentRequest(&unknown, 2, &request));
}

TEST(AgentProtocolFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("agent_protocol", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("agent_protocol")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 2000), 12006u);
}

}  // namespace
}  // namespace meridian
