#include "testing/fuzz_replay.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace meridian {

std::vector<std::string> FuzzCorpus(const std::string& name) {
  const char* runfiles = getenv("TEST_SRCDIR");
  const std::string dir =
      (runfiles != nullptr ? std::string(runfiles) + "/meridian/fuzz/corpus/"
                           : std::string("fuzz/corpus/")) +
      name;
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> inputs;
  for (const std::string& file : names) {
    std::ifstream in(dir + "/" + file, std::ios::binary);
    std::stringstream data;
    data << in.rdbuf();
    inputs.push_back(data.str());
  }
  return inputs;
}

void Mutate(std::mt19937* rng, std::string* bytes) {
  std::mt19937& r = *rng;
  std::string& b = *bytes;
  const int edits = 1 + static_cast<int>(r() % 4);
  for (int e = 0; e < edits && !b.empty(); ++e) {
    const size_t at = r() % b.size();
    switch (r() % 4) {
      case 0:
        b[at] = static_cast<char>(r());
        break;
      case 1:
        b.erase(at, 1 + r() % 8);
        break;
      case 2:
        b.insert(at, 1 + r() % 4, static_cast<char>(r()));
        break;
      default:  // a little-endian integer set to an edge value
        for (size_t k = at; k < std::min(b.size(), at + 8); ++k) {
          b[k] = static_cast<char>(r() % 2 ? 0xFF : 0x00);
        }
        break;
    }
  }
  if (b.empty()) b = "x";
}

size_t FuzzReplay(FuzzTarget target, const std::vector<std::string>& inputs,
                  int rounds) {
  std::mt19937 rng(42);
  size_t fed = 0;
  auto feed = [&](const std::string& input) {
    target(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    ++fed;
  };
  for (const std::string& input : inputs) {
    feed(input);
    for (int round = 0; round < rounds; ++round) {
      std::string b = input;
      Mutate(&rng, &b);
      feed(b);
    }
  }
  return fed;
}

void WriteSeeds(const std::string& name,
                const std::vector<std::string>& seeds) {
  const char* dir = getenv("MERIDIAN_WRITE_SEEDS");
  if (dir == nullptr) return;
  const std::string path = std::string(dir) + "/" + name;
  mkdir(path.c_str(), 0755);
  for (size_t i = 0; i < seeds.size(); ++i) {
    std::ofstream(path + "/seed-" + std::to_string(i), std::ios::binary)
        << seeds[i];
  }
}

}  // namespace meridian
