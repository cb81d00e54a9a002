#include "query/export/proto_encoder.h"

#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

TEST(ProtoEncoderTest, WritesScalarFields) {
  std::string out;
  ProtoEncoder e(&out);
  e.Varint(1, 150);
  e.Int(2, -1);
  e.Fixed64(47, 0x0102030405060708ULL);
  e.Double(5, 1.0);
  e.Bytes(10, "hi");
  EXPECT_EQ(out,
            Bytes({0x08, 0x96, 0x01,                                      //
                   0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,        //
                   0xff, 0xff, 0x01,                                      //
                   0xf9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03,        //
                   0x02, 0x01,                                            //
                   0x29, 0,    0,    0,    0,    0,    0,    0xf0, 0x3f,  //
                   0x52, 0x02, 'h',  'i'}));
}

TEST(ProtoEncoderTest, BackfillsShortMessageLengths) {
  std::string out = "x";
  ProtoEncoder e(&out);
  const size_t m = e.BeginMessage(2);
  e.Varint(1, 150);
  e.EndMessage(m);
  EXPECT_EQ(out, Bytes({'x', 0x12, 0x03, 0x08, 0x96, 0x01}));
}

TEST(ProtoEncoderTest, MovesBodiesThatNeedALongerLength) {
  std::string out;
  ProtoEncoder e(&out);
  const size_t outer = e.BeginMessage(1);
  const size_t inner = e.BeginMessage(2);
  e.Bytes(3, std::string(200, 'a'));  // 1 + 2 + 200 bytes
  e.EndMessage(inner);                // 203: two length bytes
  e.Varint(4, 1);
  e.EndMessage(outer);  // 1 + 2 + 203 + 2 = 208
  ASSERT_EQ(out.size(), 3u + 208u);
  EXPECT_EQ(out.substr(0, 7),
            Bytes({0x0a, 0xd0, 0x01, 0x12, 0xcb, 0x01, 0x1a}));
  EXPECT_EQ(out.substr(7, 2), Bytes({0xc8, 0x01}));
  EXPECT_EQ(out.substr(9, 200), std::string(200, 'a'));
  EXPECT_EQ(out.substr(209), Bytes({0x20, 0x01}));
}

TEST(ProtoEncoderTest, VarintSizes) {
  EXPECT_EQ(ProtoEncoder::VarintSize(0), 1u);
  EXPECT_EQ(ProtoEncoder::VarintSize(127), 1u);
  EXPECT_EQ(ProtoEncoder::VarintSize(128), 2u);
  EXPECT_EQ(ProtoEncoder::VarintSize(~0ULL), 10u);
}

}  // namespace
}  // namespace meridian
