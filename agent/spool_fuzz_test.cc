#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agent/spool.h"
#include "gtest/gtest.h"
#include "testing/file_text.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

// Spool files as an agent writes them.
std::vector<std::string> Seeds() {
  char dir[] = "/tmp/meridian-spool-fuzz-XXXXXX";
  const std::string path = mkdtemp(dir);
  std::vector<std::string> seeds;
  {
    auto spool = Spool::Open(path, 1 << 20);
    v1::Batch batch;
    batch.set_agent_id("node/agent-1");
    batch.set_batch_seq(1);
    batch.add_strings("");
    for (int i = 0; i < 3; ++i) batch.add_spans()->set_start_ns(i);
    EXPECT_EQ(*(*spool)->Append(batch, {{77, 0, 10}, {77, 1, 4}}), 1u);
  }
  seeds.push_back(FileText(path + "/00000000000000000001.batch"));
  (void)!system(("rm -rf " + path).c_str());
  return seeds;
}

TEST(SpoolFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("spool", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("spool")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 3000), 3001u);
}

}  // namespace
}  // namespace meridian
