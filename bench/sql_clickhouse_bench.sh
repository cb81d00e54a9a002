#!/usr/bin/env bash
# ./bench/run.sh sql-clickhouse [--spans N] [--rounds R]
# What `meridian sql` costs on a ClickHouse store, where the collector runs
# the statement on a temporary SQLite copy of the job (query/sql/sql_copy.h),
# against the same statement on a SQLite collector. One job of about N spans
# (default 2M: big's shape, bench/big_job.sh, 256 ranks on 64 nodes) is
# written by `meridian-synth --store` into a real ClickHouse server
# (testing/clickhouse_for_test) and into a SQLite store; a collector runs on
# each (no background refresh: both solve the job's clocks when asked).
# R rounds (default 3), alternated, of
#   SELECT count(*), sum(dur_ns) FROM spans   (--job big, corrected times)
# timed as the whole `meridian sql` command. Medians; last line: JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
spans=2000000
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --spans) spans=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "sql_clickhouse_bench: unknown flag $1" >&2; exit 2 ;;
  esac
done
bazel build //collector:meridian-collector //testing:meridian-synth \
  //testing:clickhouse_for_test //cli:meridian >&2
bin="$(bazel info bazel-bin 2>/dev/null)"
work=$(mktemp -d /tmp/meridian-sqlch-XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
coproc CLICKHOUSE { exec "$bin/testing/clickhouse_for_test" sql_bench; }
pids+=("$CLICKHOUSE_PID")
read -r location <&"${CLICKHOUSE[0]}"
if [[ "$location" == SKIP:* ]]; then
  echo "sql_clickhouse_bench: no ClickHouse here: ${location#SKIP: }" >&2
  exit 1
fi
read -r MERIDIAN_CLICKHOUSE_USER <&"${CLICKHOUSE[0]}"
read -r MERIDIAN_CLICKHOUSE_PASSWORD <&"${CLICKHOUSE[0]}"
export MERIDIAN_CLICKHOUSE_USER MERIDIAN_CLICKHOUSE_PASSWORD
ranks=256 nodes=64
steps=$(( (spans + ranks * 1006 - 1) / (ranks * 1006) ))
for store in "$location" "$work/big.db"; do
  "$bin/testing/meridian-synth" --store "$store" --job big --ranks $ranks \
    --nodes $nodes --steps "$steps" --layers 500 --jitter-ns 50000 >&2
done
start_collector() {  # NAME STORE: sets address
  local line
  mkfifo "$work/$1.ready"
  "$bin/collector/meridian-collector" --listen 127.0.0.1:0 --store "$2" \
    --refresh-after-ms 0 >"$work/$1.ready" 2>"$work/$1.log" &
  pids+=($!)
  read -r line <"$work/$1.ready"
  address=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
}
start_collector clickhouse "$location"; on_clickhouse=$address
start_collector sqlite "$work/big.db"; on_sqlite=$address
query="SELECT count(*), sum(dur_ns) FROM spans"
now() { date +%s%N; }
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
ch_ms=() sq_ms=()
for ((r = 1; r <= rounds; r++)); do
  t=$(now); ch=$("$bin/cli/meridian" --collector "$on_clickhouse" sql --job big --csv "$query"); ch_ms+=($(( ($(now) - t) / 1000000 )))
  t=$(now); sq=$("$bin/cli/meridian" --collector "$on_sqlite" sql --job big --csv "$query"); sq_ms+=($(( ($(now) - t) / 1000000 )))
  [ "$ch" = "$sq" ] || { echo "sql_clickhouse_bench: ClickHouse answered $ch, SQLite $sq" >&2; exit 1; }
done
job_spans=$(tail -1 <<<"$sq"); job_spans=${job_spans%%,*}
cm=$(median "${ch_ms[@]}"); sm=$(median "${sq_ms[@]}")
echo "job big: $job_spans spans, $ranks ranks on $nodes nodes, $steps steps; same answer on both ($(tail -1 <<<"$sq"))"
echo "meridian sql, median of $rounds: on ClickHouse (a copy of the job) ${cm} ms ($(( job_spans * 1000 / (cm > 0 ? cm : 1) )) spans/s), on SQLite ${sm} ms"
echo "{\"bench\": \"sql-clickhouse\", \"spans\": $job_spans, \"clickhouse_ms\": $cm, \"sqlite_ms\": $sm, \"clickhouse_ms_runs\": [$(IFS=,; echo "${ch_ms[*]}")], \"sqlite_ms_runs\": [$(IFS=,; echo "${sq_ms[*]}")]}"
