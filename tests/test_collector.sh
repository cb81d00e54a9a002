# Sourced by the shell tests that query a real collector:
#   source "$runfiles/tests/test_collector.sh" NAME
# with runfiles, collector_bin, meridian_bin, work and fail() set. Starts
# the store (SQLite at $work/m.db, or with MERIDIAN_TEST_STORE=clickhouse a
# real ClickHouse server from clickhouse_for_test, named NAME, that lives
# while its stdin is open; the test exits 0 as skipped if there is none),
# then a collector on it with no background refresh (the tests check what
# each query solves, makes and stores itself; tests/operations_test.cc
# tests the refresh). Sets store, pid, clickhouse_pid and addr, kills both
# on exit, and defines m() to run meridian against the collector.
store="$work/m.db"
clickhouse_pid=""
if [ "${MERIDIAN_TEST_STORE:-}" = clickhouse ]; then
  coproc CLICKHOUSE { exec "$runfiles/testing/clickhouse_for_test" "$1"; }
  clickhouse_pid=$CLICKHOUSE_PID
  read -r store <&"${CLICKHOUSE[0]}" || fail "clickhouse_for_test did not start"
  if [[ "$store" == SKIP:* ]]; then
    echo "$(basename "$0" .sh): SKIPPED on ClickHouse: ${store#SKIP: }"
    exit 0
  fi
  read -r MERIDIAN_CLICKHOUSE_USER <&"${CLICKHOUSE[0]}"
  read -r MERIDIAN_CLICKHOUSE_PASSWORD <&"${CLICKHOUSE[0]}"
  export MERIDIAN_CLICKHOUSE_USER MERIDIAN_CLICKHOUSE_PASSWORD
fi

coproc COLLECTOR { exec "$collector_bin" --listen 127.0.0.1:0 --store "$store" --refresh-after-ms 0 2>"$work/collector.log"; }
pid=$COLLECTOR_PID
trap 'kill -9 $pid 2>/dev/null || true; [ -z "$clickhouse_pid" ] || kill -TERM "$clickhouse_pid" 2>/dev/null || true' EXIT
read -r line <&"${COLLECTOR[0]}" || fail "collector did not start"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
m() { "$meridian_bin" --collector "$addr" "$@"; }
