// Runs the fuzz target over deterministic mutations of valid chunks, both
// of the compressed bytes and of the block inside the zstd frame (where
// most column errors live), so CI exercises the decoder's error paths
// without a fuzzing engine. With clang: link span_chunk_fuzz.cc with
// -fsanitize=fuzzer for the real thing.
#include <zstd.h>

#include <random>
#include <string>

#include "gtest/gtest.h"
#include "testing/fuzz_replay.h"
#include "wire/span_chunk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

std::string ValidChunk() {
  SpanColumns s;
  for (int i = 0; i < 50; ++i) {
    s.Add(1000 + i * 37, i % 9, i % 3, 1, i % 2);
    s.flags.back() = static_cast<uint8_t>(i % 32);
    s.peer.back() = i;
    s.tag.back() = -i;
    s.seq.back() = i * 5;
    s.step.back() = i / 4;
    s.partition.back() = i % 4;
    if (i % 5 == 0) s.AddArg({1, ChunkArg::Type::kString, 2, 0});
    if (i % 7 == 0) s.AddArg({3, ChunkArg::Type::kReal, 0, 1.5});
  }
  return *EncodeSpanChunk(s);
}

void Feed(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()),
                         input.size());
}

TEST(SpanChunkFuzzTest, MutatedChunksNeverCrash) {
  const std::string seed = ValidChunk();
  Feed(seed);
  std::string block(ZSTD_getFrameContentSize(seed.data() + 1, seed.size() - 1),
                    '\0');
  ASSERT_EQ(ZSTD_decompress(block.data(), block.size(), seed.data() + 1,
                            seed.size() - 1),
            block.size());
  std::mt19937 rng(42);
  for (int round = 0; round < 3000; ++round) {
    std::string b = block;
    Mutate(&rng, &b);
    std::string frame(1 + ZSTD_compressBound(b.size()), '\0');
    frame[0] = 1;
    frame.resize(1 + ZSTD_compress(frame.data() + 1, frame.size() - 1, b.data(),
                                   b.size(), 1));
    Feed(frame);
    std::string raw = seed;
    raw[rng() % raw.size()] = static_cast<char>(rng());
    Feed(raw);
  }
}

}  // namespace
}  // namespace meridian
