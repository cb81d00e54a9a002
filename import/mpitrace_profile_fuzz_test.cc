#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/file_text.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

std::string Testdata(const std::string& name) {
  const std::string text = FileText(std::string(getenv("TEST_SRCDIR")) +
                                    "/meridian/import/testdata/" + name);
  EXPECT_FALSE(text.empty()) << name;
  return text;
}

// Both sample profiles (rank 0 with its summary of all ranks, rank 3 with
// a section the reader skips) and a minimal one, squeezed as some tools
// print it.
std::vector<std::string> Seeds() {
  return {
      Testdata("mpi_profile.1234.0"),
      Testdata("mpi_profile.1234.3"),
      "Data for MPI rank 1 of 2:\nMPI Routine #calls avg. bytes time(sec)\n"
      "MPI_Send 3 8.0 0.001\nMPI task 1 of 2 had the median communication "
      "time.\ntotal communication time = 0.001 seconds.\nMessage size "
      "distributions:\nMPI_Send #calls avg. bytes time(sec)\n3 8.0 0.001\n",
  };
}

TEST(MpitraceProfileFuzzTest, CorpusAndMutationsNeverCrash) {
  WriteSeeds("mpitrace_profile", Seeds());
  std::vector<std::string> inputs = Seeds();
  for (std::string& input : FuzzCorpus("mpitrace_profile")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 2000), 6003u);
}

}  // namespace
}  // namespace meridian
