#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

// A timeline of each framework, each in every form it is written in.
std::vector<std::string> Seeds() {
  return {
      // Horovod 0.20.1 and later: closed, the epoch header, cycle markers.
      R"json([
{"name": "process_name", "ph": "M", "pid": 0, "args": {"start_time_since_epoch_in_micros":1764000000000000}},
{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "grad_0"}},
{"name": "process_sort_index", "ph": "M", "pid": 1, "args": {"sort_index": 1}},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 10, "pid": 1},
{"ph": "X", "name": "1", "ts": 10, "pid": 1, "dur": 0},
{"ph": "E", "ts": 12, "pid": 1},
{"ph": "B", "name": "ALLREDUCE", "ts": 13, "pid": 1},
{"ph": "B", "name": "NCCL_ALLREDUCE", "ts": 14, "pid": 1},
{"ph": "E", "ts": 20, "pid": 1},
{"ph": "E", "ts": 21, "pid": 1, "args": {"dtype": "HOROVOD_FLOAT32", "shape": "[2, 3]"}},
{"ph": "i", "name": "CYCLE_START", "ts": 22, "s": "g"}])json",
      // Horovod up to 0.20.0: never closed; a name written unescaped.
      R"json([
{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "a"b\c"}},
{"ph": "B", "name": "NEGOTIATE_BROADCAST", "ts": 1, "pid": 1},
{"ph": "X", "name": "0", "ts": 1, "pid": 1, "dur": 0},
{"ph": "E", "ts": 2, "pid": 1},
{"ph": "B", "name": "BROADCAST", "ts": 3, "pid": 1},
{"ph": "B", "name": "MPI_BCAST", "ts": 3, "pid": 1},
{"ph": "E", "ts": 4, "pid": 1},
{"ph": "E", "ts": 5, "pid": 1, "args": {"dtype": "HOROVOD_INT8", "shape": "[]"}},
)json",
      // BytePS.
      R"json({
    "traceEvents": [
        {"ph": "X", "args": {"name": "Comm.g"}, "pid": "Comm.g", "name": "Comm.g",
         "ts": 1764000000000000, "dur": 20, "tid": "total", "cat": "Comm"},
        {"ph": "X", "args": {"name": "Comm.g"}, "pid": "Comm.g", "name": "Comm.g.PUSH",
         "ts": 1764000000000001, "dur": 5, "tid": "26148864", "cat": "Comm"},
        {"ph": "X", "args": {"name": "Comm.g"}, "pid": "Comm.g", "name": "Comm.g.PULL",
         "ts": 1764000000000006, "dur": 5, "tid": 26148865, "cat": "Comm"}
    ],
    "displayTimeUnit": "ms"
})json",
      // Bluefog: never closed, threads.
      R"json([
{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "w"}},
{"ph": "B", "name": "ENQUEUE_ALLREDUCE", "ts": 3600000000, "pid": 1, "tid": 1},
{"ph": "B", "name": "PROC_ALLREDUCE", "ts": 3600000001, "pid": 1, "tid": 2},
{"ph": "B", "name": "COMMUNICATE", "ts": 3600000002, "pid": 1, "tid": 2},
{"ph": "E", "ts": 3600000003, "pid": 1, "tid": 2},
{"ph": "E", "ts": 3600000004, "pid": 1, "tid": 2},
{"ph": "E", "ts": 3600000005, "pid": 1, "tid": 1},
{"ph": "B", "name": "FORWARD", "ts": 3600000006, "pid": 1, "tid": 1},
)json",
  };
}

TEST(FrameworkTimelineFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("framework_timeline", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("framework_timeline")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 2000), 8004u);
}

}  // namespace
}  // namespace meridian
