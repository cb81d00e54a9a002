// libFuzzer entry point: any bytes, as a message a client sends the agent,
// are refused or decode to a known request with its text fields ending
// within their arrays.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "abi/agent_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::AgentRequest request;
  if (!meridian::DecodeAgentRequest(data, size, &request)) return 0;
  if (request.type == meridian::AgentMessage::kProbeHello &&
      strnlen(request.hello.job, sizeof(request.hello.job)) ==
          sizeof(request.hello.job)) {
    abort();
  }
  if (request.type == meridian::AgentMessage::kTraceRequest &&
      strnlen(request.trace.job, sizeof(request.trace.job)) ==
          sizeof(request.trace.job)) {
    abort();
  }
  return 0;
}
