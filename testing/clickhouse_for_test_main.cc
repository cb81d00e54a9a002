// clickhouse_for_test: a real clickhouse-server for a shell test (the
// _clickhouse twin of tests/cli_test.sh). Prints the store location, the
// user and the password, one a line, then serves until its stdin closes,
// and stops the server. Where clickhouse-server is not installed it prints
// "SKIP: " and why, and exits 0.
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "testing/test_store.h"

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "shell";
  auto location =
      meridian::NewStoreLocation(meridian::StoreKind::kClickHouse, name);
  if (absl::IsFailedPrecondition(location.status())) {
    printf("SKIP: %s\n", std::string(location.status().message()).c_str());
    return 0;
  }
  if (!location.ok()) {
    fprintf(stderr, "clickhouse_for_test: %s\n",
            std::string(location.status().message()).c_str());
    return 1;
  }
  auto server = meridian::TestClickHouseServer();
  printf("%s\n%s\n%s\n", location->c_str(), (*server)->endpoint().user.c_str(),
         (*server)->endpoint().password.c_str());
  fflush(stdout);
  char buffer[256];
  while (fgets(buffer, sizeof buffer, stdin) != nullptr) {
  }
  return 0;  // the server stops with the process's statics
}
