// Linked into the _clickhouse variant of a both_stores_cc_test: starts the
// binary's ClickHouse server before any test, or skips every test, saying
// why, where clickhouse-server is not installed.
#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "testing/test_store.h"

namespace meridian {
namespace {

class ClickHouseEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto server = TestClickHouseServer();
    if (absl::IsFailedPrecondition(server.status())) {
      GTEST_SKIP() << server.status().message();
    }
    ASSERT_TRUE(server.ok()) << server.status();
  }
};

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new ClickHouseEnvironment());

}  // namespace
}  // namespace meridian
