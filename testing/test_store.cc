#include "testing/test_store.h"

#include <stdlib.h>

#include <cstdio>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "store/store.h"

namespace meridian {

std::string StoreKindName(const ::testing::TestParamInfo<StoreKind>& info) {
  switch (info.param) {
    case StoreKind::kSqlite:
      return "Sqlite";
    case StoreKind::kClickHouse:
      return "ClickHouse";
    case StoreKind::kClickHouseDistributed:
      return "ClickHouseDistributed";
  }
  return "";
}

StoreKind StoreKindFromEnvironment() {
  const char* kind = getenv("MERIDIAN_TEST_STORE");
  return kind != nullptr && std::string(kind) == "clickhouse"
             ? StoreKind::kClickHouse
             : StoreKind::kSqlite;
}

absl::StatusOr<ClickHouseServer*> TestClickHouseServer() {
  static std::unique_ptr<ClickHouseServer> server;
  static absl::Status failed;
  if (server == nullptr && failed.ok()) {
    auto started = ClickHouseServer::Start();
    if (!started.ok()) {
      failed = started.status();
    } else {
      server = std::move(*started);
    }
  }
  if (!failed.ok()) return failed;
  // Set at every call: a test may have changed them.
  setenv("MERIDIAN_CLICKHOUSE_USER", server->endpoint().user.c_str(), 1);
  setenv("MERIDIAN_CLICKHOUSE_PASSWORD", server->endpoint().password.c_str(),
         1);
  unsetenv("MERIDIAN_CLICKHOUSE_CREDENTIALS");
  return server.get();
}

absl::StatusOr<std::pair<ClickHouseServer*, ClickHouseServer*>>
TestClickHouseCluster() {
  static std::unique_ptr<ClickHouseServer> second, first;
  static absl::Status failed;
  if (first == nullptr && failed.ok()) {
    auto one = TestClickHouseServer();  // sets the credentials
    if (!one.ok()) return one.status();
    auto shard = ClickHouseServer::Start();
    if (!shard.ok()) {
      failed = shard.status();
      return failed;
    }
    second = std::move(*shard);
    const ClickHouseEndpoint& e = second->endpoint();
    const auto replica = [&](const std::string& port) {
      return absl::StrCat("<shard><replica><host>127.0.0.1</host><port>", port,
                          "</port><user>", e.user, "</user><password>",
                          e.password, "</password></replica></shard>");
    };
    auto head = ClickHouseServer::Start(
        absl::StrCat("  <remote_servers><meridian_test>", replica("{tcp_port}"),
                     replica(std::to_string(second->tcp_port())),
                     "</meridian_test></remote_servers>\n"));
    if (!head.ok()) {
      failed = head.status();
      return failed;
    }
    first = std::move(*head);
  }
  if (!failed.ok()) return failed;
  return std::make_pair(first.get(), second.get());
}

absl::StatusOr<std::string> NewStoreLocation(StoreKind kind,
                                             const std::string& name) {
  static int counter = 0;
  ++counter;
  if (kind == StoreKind::kSqlite) {
    const char* dir = getenv("TEST_TMPDIR");
    std::string path =
        absl::StrCat(dir != nullptr ? dir : "/tmp", "/", counter, "-", name);
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((path + suffix).c_str());
    }
    return path;
  }
  auto server = TestClickHouseServer();
  if (!server.ok()) return server.status();
  std::string database = absl::StrCat("t", counter, "_");
  for (char c : name) database += absl::ascii_isalnum(c) ? c : '_';
  database = database.substr(0, 56);
  if (kind == StoreKind::kClickHouse) {
    return absl::StrCat("clickhouse://127.0.0.1:", (*server)->endpoint().port,
                        "/", database);
  }
  // The shards' tables first, on both servers, as an operator makes them
  // (meridian-collector --create-store on each shard: docs/clickhouse.md).
  auto cluster = TestClickHouseCluster();
  if (!cluster.ok()) return cluster.status();
  for (ClickHouseServer* shard : {cluster->first, cluster->second}) {
    auto store = Store::Open(absl::StrCat(
        "clickhouse://127.0.0.1:", shard->endpoint().port, "/", database));
    if (!store.ok()) return store.status();
  }
  return absl::StrCat(
      "clickhouse://127.0.0.1:", cluster->first->endpoint().port, "/", database,
      "_all?cluster=meridian_test&shards=", database);
}

}  // namespace meridian
