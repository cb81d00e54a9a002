#include "testing/test_store.h"

#include <stdlib.h>

#include <cstdio>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace meridian {

std::string StoreKindName(const ::testing::TestParamInfo<StoreKind>& info) {
  return info.param == StoreKind::kSqlite ? "Sqlite" : "ClickHouse";
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
  database = database.substr(0, 60);
  return absl::StrCat("clickhouse://127.0.0.1:", (*server)->endpoint().port,
                      "/", database);
}

}  // namespace meridian
