#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

// One trace of each dialect, every phase.
std::vector<std::string> Seeds() {
  return {
      R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"rank 1"}},
{"ph":"X","name":"a","cat":"mpi","pid":1,"tid":2,"ts":1.5,"dur":2,"args":{"bytes":8,"comm":"0x1f","seq":3}},
{"ph":"B","name":"b","pid":1,"tid":2,"ts":4},{"ph":"E","pid":1,"tid":2,"ts":5},
{"ph":"i","name":"i","pid":"p","tid":"t","ts":6},{"ph":"C","name":"c","pid":1,"ts":7,"args":{"x":1,"y":2.5}},
{"ph":"s","id":1,"pid":1,"tid":2,"ts":1.5},{"ph":"f","bp":"e","id":1,"pid":1,"tid":3,"ts":9},
{"ph":"b","cat":"q","id":"0x2","pid":1,"ts":10},{"ph":"e","cat":"q","id":"0x2","pid":1,"ts":11},
{"ph":"X","name":"k","cat":"cuda_kernel","pid":1,"tid":3,"ts":9,"dur":1}])",
      R"({"schemaVersion":1,"baseTimeNanoseconds":1764000000000000000,"traceEvents":[
{"ph":"X","cat":"kernel","name":"ncclKernel","pid":0,"tid":7,"ts":1.000,"dur":2.000,
 "args":{"correlation":5,"Collective name":"allreduce","In msg nelems":4,"dtype":"Float"}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":0.5,"dur":0.1,"args":{"correlation":5}}
],"distributedInfo":{"rank":2}})",
      R"({"traceEvents":[{"ph":"M","name":"thread_sort_index","pid":1,"tid":1,"args":{"sort_index":1000001}},
{"ph":"X","cat":"nccl","name":"AllReduce","pid":1,"tid":1,"ts":0.001,"dur":0.002}],
"displayTimeUnit":"ns","otherData":{"epoch_ns":1764000000000000000}})",
  };
}

TEST(ChromeTraceFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("chrome_trace", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("chrome_trace")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 2000), 6003u);
}

}  // namespace
}  // namespace meridian
