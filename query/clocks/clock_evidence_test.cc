#include "query/clocks/clock_evidence.h"

#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "meridian/v1/query.pb.h"
#include "testing/fuzz_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace meridian {
namespace {

ClockEvidence Example() {
  ClockEvidence e;
  EvidenceSpan allreduce;
  allreduce.track_id = 7;
  allreduce.op_id = 3;
  allreduce.start_ns = 1000;
  allreduce.dur_ns = 50;
  allreduce.comm = 0xfeedULL;
  allreduce.seq = 12;
  allreduce.has_seq = true;
  e.spans.push_back(allreduce);
  EvidenceSpan neighbor;
  neighbor.track_id = 8;
  neighbor.op_id = 4;
  neighbor.start_ns = std::numeric_limits<int64_t>::max() - 5;
  neighbor.dur_ns = 5;
  neighbor.peer = 2;
  neighbor.tag = -7;
  neighbor.sources = {0, 3};
  e.spans.push_back(neighbor);
  e.SawStart(7, 1000);
  e.SawStart(9, 900);
  e.SawStart(9, 950);
  return e;
}

std::string Text(const ClockEvidence& e) {
  std::string out;
  for (const EvidenceSpan& s : e.spans) {
    out += std::to_string(s.track_id) + " " + std::to_string(s.op_id) + " " +
           std::to_string(s.start_ns) + " " + std::to_string(s.dur_ns) + " " +
           std::to_string(s.comm) + " " + std::to_string(s.seq) + " " +
           std::to_string(s.has_seq) + " " + std::to_string(s.peer) + " " +
           std::to_string(s.tag) + " [";
    for (int32_t r : s.sources) out += std::to_string(r) + ",";
    out += "]\n";
  }
  for (int64_t track : {7, 8, 9}) {
    auto it = e.first_start.find(track);
    if (it != e.first_start.end()) {
      out += "first " + std::to_string(track) + " " +
             std::to_string(it->second) + "\n";
    }
  }
  return out;
}

TEST(ClockEvidenceTest, APartReadsBackExactly) {
  const ClockEvidence e = Example();
  EXPECT_EQ(Text(e),
            "7 3 1000 50 65261 12 1 -1 0 []\n"
            "8 4 9223372036854775802 5 0 0 0 2 -7 [0,3,]\n"
            "first 7 1000\n"
            "first 9 900\n");
  ClockEvidence back;
  EXPECT_EQ(DecodeEvidence(EncodeEvidence(e, false), &back),
            EvidencePart::kPart);
  EXPECT_EQ(Text(back), Text(e));
  // A second part adds to the first; first starts keep the earliest.
  ClockEvidence later;
  EvidenceSpan send;
  send.track_id = 9;
  send.op_id = 5;
  send.start_ns = 800;
  send.dur_ns = 1;
  later.spans.push_back(send);
  later.SawStart(9, 800);
  EXPECT_EQ(DecodeEvidence(EncodeEvidence(later, false), &back),
            EvidencePart::kPart);
  EXPECT_EQ(back.spans.size(), 3u);
  EXPECT_EQ(back.first_start.at(9), 800);
  EXPECT_EQ(back.first_start.at(7), 1000);
}

TEST(ClockEvidenceTest, AWholePartReplacesWhatCameBefore) {
  ClockEvidence back = Example();
  ClockEvidence whole;
  whole.SawStart(1, 5);
  EXPECT_EQ(DecodeEvidence(EncodeEvidence(whole, true), &back),
            EvidencePart::kWhole);
  EXPECT_TRUE(back.spans.empty());
  ASSERT_EQ(back.first_start.size(), 1u);
  EXPECT_EQ(back.first_start.at(1), 5);
}

TEST(ClockEvidenceTest, WhatDoesNotReadIsDamaged) {
  ClockEvidence back;
  const std::string good = EncodeEvidence(Example(), false);
  EXPECT_EQ(DecodeEvidence("", &back), EvidencePart::kDamaged);
  EXPECT_EQ(DecodeEvidence("meridian-evidence 2 part\n", &back),
            EvidencePart::kDamaged);
  EXPECT_EQ(DecodeEvidence(good.substr(0, good.size() - 3), &back),
            EvidencePart::kDamaged);
  // Columns of different lengths.
  v1::StoredClockEvidence columns;
  columns.add_track_id(1);
  EXPECT_EQ(
      DecodeEvidence("meridian-evidence 1 part\n" + columns.SerializeAsString(),
                     &back),
      EvidencePart::kDamaged);
  // More sources listed than the spans say.
  ClockEvidence one;
  one.spans.push_back(EvidenceSpan{});
  std::string data = EncodeEvidence(one, false);
  v1::StoredClockEvidence extra;
  extra.add_source_ranks(4);
  data += extra.SerializeAsString();  // appended fields merge
  EXPECT_EQ(DecodeEvidence(data, &back), EvidencePart::kDamaged);
}

// The fuzz target (clock_evidence_fuzz.cc) over its corpus and mutations
// of valid parts: no crash (the sanitizers of tests/fuzz.sh find more).
TEST(ClockEvidenceTest, TheFuzzTargetTakesAnyBytes) {
  std::vector<std::string> inputs = {EncodeEvidence(Example(), false),
                                     EncodeEvidence(Example(), true)};
  WriteSeeds("clock_evidence", inputs);
  for (std::string& input : FuzzCorpus("clock_evidence")) {
    inputs.push_back(std::move(input));
  }
  EXPECT_GE(FuzzReplay(LLVMFuzzerTestOneInput, inputs, 3000), 6002u);
}

}  // namespace
}  // namespace meridian
