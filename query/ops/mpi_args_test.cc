#include "query/ops/mpi_args.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

StoredArg Text(const std::string& key, const std::string& value) {
  StoredArg arg;
  arg.key = key;
  arg.type = StoredArg::Type::kString;
  arg.str = value;
  return arg;
}

StoredArg Int(const std::string& key, int64_t value) {
  StoredArg arg;
  arg.key = key;
  arg.type = StoredArg::Type::kInt;
  arg.int_value = value;
  return arg;
}

StoredSpan With(std::vector<StoredArg> args) {
  StoredSpan span;
  span.args = std::move(args);
  return span;
}

// The header's example, and one source, which the agent stores as an
// integer.
TEST(MpiArgsTest, SourcesAsTheProbeWritesThem) {
  EXPECT_THAT(NeighborSources(With({Text("sources", "3,1")})),
              ElementsAre(3, 1));
  EXPECT_THAT(NeighborSources(With({Int("other", 4), Int("sources", 5)})),
              ElementsAre(5));
  EXPECT_THAT(NeighborSources(With({Int("other", 4)})), IsEmpty());
  std::string most = "0";
  for (int i = 1; i < 256; ++i) absl::StrAppend(&most, ",", i);
  EXPECT_EQ(ParseNeighborSources(most).size(), 256u);
  EXPECT_THAT(ParseNeighborSources("2147483647,0"), ElementsAre(2147483647, 0));
}

// Whatever a client wrote, a malformed list is no list at all.
TEST(MpiArgsTest, MalformedSourcesAreNone) {
  for (const char* text :
       {"", ",", "1,", ",1", "1,,2", "a", "1,x", "-1", "+1", " 1", "1 ", "0x10",
        "1.5", "2147483648", "99999999999999999999", "1;2"}) {
    EXPECT_THAT(ParseNeighborSources(text), IsEmpty()) << text;
  }
  std::string too_many = "0";
  for (int i = 1; i < 257; ++i) absl::StrAppend(&too_many, ",", i);
  EXPECT_THAT(ParseNeighborSources(too_many), IsEmpty());
  EXPECT_THAT(ParseNeighborSources(std::string(1 << 20, '1')), IsEmpty());
  EXPECT_THAT(NeighborSources(With({Int("sources", -1)})), IsEmpty());
  EXPECT_THAT(NeighborSources(With({Int("sources", int64_t{1} << 40)})),
              IsEmpty());
  StoredArg real;
  real.key = "sources";
  real.type = StoredArg::Type::kReal;
  real.real_value = 3;
  EXPECT_THAT(NeighborSources(With({real})), IsEmpty());
}

// A lock that is taken is exclusive or shared; one that is not (nocheck),
// or says no type, orders nothing.
TEST(MpiArgsTest, LocksTakeTheirTypesRole) {
  const SpanRole lock = SpanRole::kLock;
  EXPECT_EQ(RoleOfSpan(lock, With({Text("lock_type", "exclusive")})),
            SpanRole::kLock);
  EXPECT_EQ(RoleOfSpan(lock, With({Text("lock_type", "shared")})),
            SpanRole::kSharedLock);
  EXPECT_EQ(
      RoleOfSpan(lock, With({Text("lock_type", "shared"), Int("nocheck", 0)})),
      SpanRole::kSharedLock);
  EXPECT_EQ(RoleOfSpan(lock, With({Text("lock_type", "exclusive"),
                                   Int("nocheck", 1)})),
            SpanRole::kNone);
  EXPECT_EQ(
      RoleOfSpan(lock, With({Text("lock_type", "shared"), Int("nocheck", 1)})),
      SpanRole::kNone);
  EXPECT_EQ(RoleOfSpan(lock, With({Text("lock_type", "Shared")})),
            SpanRole::kNone);
  EXPECT_EQ(RoleOfSpan(lock, With({})), SpanRole::kNone);
  EXPECT_EQ(RoleOfSpan(lock, With({Int("lock_type", 1)})), SpanRole::kNone);
  EXPECT_EQ(RoleOfSpan(lock, With({Text("lock_type", "EXCLUSIVE")})),
            SpanRole::kNone);
  // Other roles are their operation's, whatever the args.
  EXPECT_EQ(RoleOfSpan(SpanRole::kUnlock, With({})), SpanRole::kUnlock);
  EXPECT_EQ(RoleOfSpan(SpanRole::kAllToAll, With({Text("lock_type", "x")})),
            SpanRole::kAllToAll);
}

// A Win_post's or Win_start's group, as the probe writes it: a list, or
// one member as an integer; malformed ones are none, as sources are.
TEST(MpiArgsTest, EpochGroupsAsTheProbeWritesThem) {
  const StoredSpan post = With({Text("group", "0,1,2")});
  EXPECT_THAT(EpochGroup(post), ElementsAre(0, 1, 2));
  EXPECT_THAT(EpochGroup(With({Int("group", 3)})), ElementsAre(3));
  EXPECT_THAT(EpochGroup(With({Text("sources", "1")})), IsEmpty());
  EXPECT_THAT(EpochGroup(With({Text("group", "1,-2")})), IsEmpty());
  EXPECT_THAT(EpochGroup(With({Int("group", -1)})), IsEmpty());
  EXPECT_TRUE(ListsRanks(SpanRole::kPost));
  EXPECT_TRUE(ListsRanks(SpanRole::kStart));
  EXPECT_TRUE(ListsRanks(SpanRole::kNeighbor));
  EXPECT_FALSE(ListsRanks(SpanRole::kComplete));
  EXPECT_FALSE(ListsRanks(SpanRole::kWinWait));
  EXPECT_THAT(ListedRanks(SpanRole::kPost, post), ElementsAre(0, 1, 2));
  EXPECT_THAT(ListedRanks(SpanRole::kStart, With({Int("group", 3)})),
              ElementsAre(3));
  // Each role reads its own arg.
  EXPECT_THAT(ListedRanks(SpanRole::kNeighbor, post), IsEmpty());
  EXPECT_THAT(ListedRanks(SpanRole::kNeighbor, With({Int("sources", 2)})),
              ElementsAre(2));
  EXPECT_THAT(ListedRanks(SpanRole::kComplete, post), IsEmpty());
}

TEST(MpiArgsTest, ASendrecvsReceiveAsTheAgentWritesIt) {
  StoredSpan span;
  auto arg = [](const char* key, int64_t value) {
    StoredArg a;
    a.key = key;
    a.type = StoredArg::Type::kInt;
    a.int_value = value;
    return a;
  };
  EXPECT_FALSE(SendrecvReceive(span).has_value());  // an older probe's
  span.args = {arg("recv_peer", 3), arg("recv_tag", 9)};
  const std::optional<ReceiveHalf> r = SendrecvReceive(span);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->peer, 3);
  EXPECT_EQ(r->tag, 9);
  // Either missing, negative, too large or not an integer: none.
  for (const std::vector<StoredArg>& args : std::vector<std::vector<StoredArg>>{
           {arg("recv_peer", 3)},
           {arg("recv_tag", 9)},
           {arg("recv_peer", -1), arg("recv_tag", 9)},
           {arg("recv_peer", 3), arg("recv_tag", -2)},
           {arg("recv_peer", int64_t{1} << 31), arg("recv_tag", 9)}}) {
    span.args = args;
    EXPECT_FALSE(SendrecvReceive(span).has_value());
  }
  StoredArg text;
  text.key = "recv_peer";
  text.type = StoredArg::Type::kString;
  text.str = "3";
  span.args = {text, arg("recv_tag", 9)};
  EXPECT_FALSE(SendrecvReceive(span).has_value());
}

}  // namespace
}  // namespace meridian
