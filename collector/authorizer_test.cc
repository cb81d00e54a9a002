#include "collector/authorizer.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr char kTokens[] = R"(# the agents
agent-token-0123456789  write:* trace:*
alice-token-0123456789  read:alice-*  trace:alice-*   # alice's jobs
)";

// A server context carrying `header` as its authorization metadata is not
// something gRPC lets a test build; Parse is checked here, and Check over
// a real connection in tests/security_test.
TEST(AuthorizerTest, ParsesTokensAndRefusesBadLines) {
  EXPECT_TRUE(Authorizer::Parse(kTokens, "tokens").ok());
  EXPECT_EQ(Authorizer::Parse("short write:*", "f").status().message(),
            "f line 1: a token must be at least 16 characters");
  EXPECT_EQ(
      Authorizer::Parse("\n0123456789abcdef delete:*", "f").status().message(),
      "f line 2: \"delete:*\" is not read:GLOB, write:GLOB, trace:GLOB or "
      "agent:GLOB");
  EXPECT_EQ(Authorizer::Parse("0123456789abcdef read:", "f").status().message(),
            "f line 1: \"read:\" names no job glob");
  EXPECT_EQ(Authorizer::Parse("0123456789abcdef", "f").status().message(),
            "f line 1: the token grants no scope");
  EXPECT_EQ(Authorizer::Parse("0123456789abcdef read:*\n0123456789abcdef "
                              "write:*",
                              "f")
                .status()
                .message(),
            "f line 2: the token is repeated");
  EXPECT_EQ(Authorizer::Parse("# nothing\n\n", "f").status().message(),
            "f holds no token: every call would be refused");
}

}  // namespace
}  // namespace meridian
