#include "testing/test_store.h"

#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
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

namespace {

// deploy/clickhouse/meridian-cluster.xml's <remote_servers>, with shard-1
// this server ({tcp_port}), shard-2 the other, and the test password.
absl::StatusOr<std::string> DeployedCluster(const std::string& password,
                                            int second_port) {
  const char* runfiles = getenv("TEST_SRCDIR");
  const std::string path =
      absl::StrCat(runfiles != nullptr ? runfiles : ".",
                   "/meridian/deploy/clickhouse/meridian-cluster.xml");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string xml = text.str();
  const size_t begin = xml.find("<remote_servers>");
  const size_t end = xml.find("</remote_servers>");
  if (!in || begin == std::string::npos || end == std::string::npos) {
    return absl::FailedPreconditionError(
        absl::StrCat("no <remote_servers> in ", path,
                     " (a test of the Distributed store needs it as data)"));
  }
  xml = xml.substr(begin, end + 17 - begin);
  const size_t second = xml.find("<port>9000</port>", xml.find("shard-2"));
  if (second == std::string::npos) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": shard-2 has no <port>9000</port>"));
  }
  xml.replace(second, 17, absl::StrCat("<port>", second_port, "</port>"));
  return absl::StrReplaceAll(xml,
                             {{"<port>9000</port>", "<port>{tcp_port}</port>"},
                              {"shard-1", "127.0.0.1"},
                              {"shard-2", "127.0.0.1"},
                              {"<password>PASSWORD</password>",
                               "<password>" + password + "</password>"}}) +
         "\n";
}

}  // namespace

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
    // The cluster deploy/clickhouse/meridian-cluster.xml declares, with
    // this machine's servers for shard-1 and shard-2.
    auto cluster =
        DeployedCluster(second->endpoint().password, second->tcp_port());
    if (!cluster.ok()) {
      failed = cluster.status();
      return failed;
    }
    auto head = ClickHouseServer::Start(*cluster);
    if (!head.ok()) {
      failed = head.status();
      return failed;
    }
    first = std::move(*head);
  }
  if (!failed.ok()) return failed;
  return std::make_pair(first.get(), second.get());
}

absl::StatusOr<int64_t> CountScannedSpans(Store& store, const JobInfo& job) {
  int64_t spans = 0;
  absl::Status scanned = store.Scan(job, {}, [&](const StoredSpan&) {
    ++spans;
    return true;
  });
  if (!scanned.ok()) return scanned;
  return spans;
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
      "_all?cluster=meridian&shards=", database);
}

}  // namespace meridian
