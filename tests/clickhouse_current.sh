#!/usr/bin/env bash
# The ClickHouse store's tests (every test tagged "clickhouse": the store's
# contract suite, the query suites' _clickhouse twins, the CLI test's twin,
# two collectors with a SIGKILL, the migration) again on a current
# ClickHouse: chDB's build of ClickHouse 26.7, served over ClickHouse's HTTP
# interface by testing/chdb_front (testing/clickhouse_server.h says what is
# ClickHouse's own there and what is not). `bazel test //...` runs them on
# Debian's clickhouse-server 18.16. The Distributed (two-shard) tests need
# the native port and skip here. deploy/dependencies.sh --tests installs
# the library; without it this says so and exits 77 (skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
library=/opt/meridian/chdb-26.7.3-stable.1/libchdb.so
if [ ! -f "$library" ]; then
  echo "clickhouse_current: SKIPPED: $library is missing (deploy/dependencies.sh --tests installs it from the npm registry)" >&2
  exit 77
fi
bazel test --test_tag_filters=clickhouse \
  --test_env=MERIDIAN_CLICKHOUSE_CHDB="$library" \
  --test_env=MERIDIAN_CLICKHOUSE_VERSION=26.7.2.1 //... "$@"
