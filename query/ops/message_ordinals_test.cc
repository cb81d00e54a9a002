#include "query/ops/message_ordinals.h"

#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(MessageOrdinalsTest, ASendrecvIsASendEndThenAReceiveEnd) {
  MessageOrdinals ordinals;
  std::vector<MessageEnd> ends;
  auto keep = [&ends](const MessageEnd& e) { ends.push_back(e); };
  ordinals.ForEachEnd(SpanRole::kSendRecv, 0, 1, 7, ReceiveHalf{3, 9}, 5, keep);
  ordinals.ForEachEnd(SpanRole::kSendRecv, 0, 1, 7, std::nullopt, 5, keep);
  ordinals.ForEachEnd(SpanRole::kRecv, 0, 3, 9, std::nullopt, 5, keep);
  ordinals.ForEachEnd(SpanRole::kAllToAll, 0, 3, 9, std::nullopt, 5, keep);
  ASSERT_EQ(ends.size(), 4u);
  EXPECT_TRUE(ends[0].send);
  EXPECT_EQ(std::tie(ends[0].source, ends[0].destination, ends[0].tag,
                     ends[0].ordinal),
            std::make_tuple(0, 1, 7, uint64_t{0}));
  EXPECT_FALSE(ends[1].send);
  EXPECT_EQ(std::tie(ends[1].source, ends[1].destination, ends[1].tag,
                     ends[1].ordinal),
            std::make_tuple(3, 0, 9, uint64_t{0}));
  EXPECT_TRUE(ends[2].send);  // the second exchange: its send only
  EXPECT_EQ(ends[2].ordinal, 1u);
  EXPECT_FALSE(ends[3].send);  // a plain receive on the same channel
  EXPECT_EQ(ends[3].ordinal, 1u);
  // Next takes sends and receives only.
  EXPECT_FALSE(ordinals.Next(SpanRole::kSendRecv, 0, 1, 7, 5).has_value());
}

TEST(MessageOrdinalsTest, NumbersEachChannelsEndsInOrder) {
  MessageOrdinals ordinals;
  auto send = ordinals.Next(SpanRole::kSend, 0, 1, 5, 7);
  ASSERT_TRUE(send.has_value());
  EXPECT_TRUE(send->send);
  EXPECT_EQ(send->source, 0);
  EXPECT_EQ(send->destination, 1);
  EXPECT_EQ(send->ordinal, 0u);
  EXPECT_EQ(ordinals.Next(SpanRole::kSend, 0, 1, 5, 7)->ordinal, 1u);
  // Another tag is another channel.
  EXPECT_EQ(ordinals.Next(SpanRole::kSend, 0, 1, 6, 7)->ordinal, 0u);
  auto recv = ordinals.Next(SpanRole::kRecv, 1, 0, 5, 7);
  ASSERT_TRUE(recv.has_value());
  EXPECT_FALSE(recv->send);
  EXPECT_EQ(recv->source, 0);
  EXPECT_EQ(recv->destination, 1);
  EXPECT_EQ(recv->ordinal, 0u);
  EXPECT_EQ(ordinals.Next(SpanRole::kRecv, 1, 0, 5, 7)->ordinal, 1u);
  EXPECT_FALSE(ordinals.Next(SpanRole::kAllToAll, 1, 0, 5, 7).has_value());
  EXPECT_FALSE(ordinals.Next(SpanRole::kSend, 1, std::nullopt, 5, 7));
  EXPECT_FALSE(ordinals.Next(SpanRole::kSend, -1, 0, 5, 7));
}

}  // namespace
}  // namespace meridian
