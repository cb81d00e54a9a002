// Stores for tests that run against both stores: SQLite (a file under
// TEST_TMPDIR) and ClickHouse (a database on a real clickhouse-server the
// test binary starts at first use; never a fake). Where clickhouse-server
// is not installed, NewStoreLocation says so and the test skips.
//
// Example (a parameterized suite):
//   class MyTest : public ::testing::TestWithParam<StoreKind> {};
//   TEST_P(MyTest, Works) {
//     auto location = NewStoreLocation(GetParam(), "works");
//     if (absl::IsFailedPrecondition(location.status())) GTEST_SKIP() << ...;
//     auto store = Store::Open(*location);
//   }
//   INSTANTIATE_TEST_SUITE_P(Stores, MyTest, AllStoreKinds(), StoreKindName);
#ifndef MERIDIAN_TESTING_TEST_STORE_H_
#define MERIDIAN_TESTING_TEST_STORE_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "testing/clickhouse_server.h"

namespace meridian {

// kClickHouseDistributed: the ClickHouse store over a cluster of two
// shards, two clickhouse-servers on this machine: Distributed tables on
// the first over the tables of both (clickhouse_store.h, ClickHouseLayout).
enum class StoreKind { kSqlite, kClickHouse, kClickHouseDistributed };

inline auto AllStoreKinds() {
  return ::testing::Values(StoreKind::kSqlite, StoreKind::kClickHouse,
                           StoreKind::kClickHouseDistributed);
}
std::string StoreKindName(const ::testing::TestParamInfo<StoreKind>& info);

// The kind MERIDIAN_TEST_STORE names: "clickhouse", or else SQLite. Suites
// that run whole against a store (the query service's, the CLI's) run once
// per kind, as two test targets.
StoreKind StoreKindFromEnvironment();

// A new, empty store location (unique per call; `name` makes it readable):
// a file path, or "clickhouse://127.0.0.1:PORT/DB" with this process's
// environment holding the server's credentials. FAILED_PRECONDITION if
// clickhouse-server is not installed.
absl::StatusOr<std::string> NewStoreLocation(StoreKind kind,
                                             const std::string& name);

// How many spans a Scan of the whole of `job` returns.
absl::StatusOr<int64_t> CountScannedSpans(Store& store, const JobInfo& job);

// The binary's ClickHouse server (started if need be).
absl::StatusOr<ClickHouseServer*> TestClickHouseServer();
// The binary's two-shard cluster "meridian" (deploy/clickhouse/
// meridian-cluster.xml, a test's data, with this machine's servers): the
// shards' servers, the first holding the cluster's configuration (started
// if need be).
absl::StatusOr<std::pair<ClickHouseServer*, ClickHouseServer*>>
TestClickHouseCluster();

}  // namespace meridian

#endif  // MERIDIAN_TESTING_TEST_STORE_H_
