#!/usr/bin/env bash
# ./bench/run.sh sql [--spans N] [--dir DIR] [--rounds R]
# Issue 53's figures for SQL over a store (docs/sql.md), on big's job
# (bench/big_bench.sh: default 100M spans, 256 ranks on 64 nodes, built once
# by `meridian-synth --store` into DIR, default /var/tmp/meridian-big). A
# collector first refreshes a copy of it (its clock solution and step
# summaries stored, as for every finished job), once, kept as
# DIR/big-N.solved.db. Then R rounds (default 3), alternated:
#   scan:  the store's own read rate (bench/store_scan.cc: Store::Scan of the
#          whole job, raw durations summed);
#   whole: `SELECT count(*), sum(dur_ns) FROM spans WHERE job = 'big'` in the
#          sqlite3 shell with the extension loaded (corrected durations);
#   rank:  the same over rank 3 and steps 10 to 19, and which chunks it
#          decoded (meridian_scan_stats()) against the chunks of rank 3's
#          tracks that hold those steps.
# Each time is the whole command's wall time (the shell started, the
# extension loaded, the query run). Medians; last line: JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/collector_metrics.sh
source bench/big_job.sh
spans=100000000
dir=/var/tmp/meridian-big
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --spans) spans=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "sql_bench: unknown flag $1" >&2; exit 2 ;;
  esac
done
bazel build //collector:meridian-collector //testing:meridian-synth \
  //query/sql:libmeridian_sqlite.so //bench:store_scan >&2
bin="$(bazel info bazel-bin 2>/dev/null)"
build_big_job "$dir" "$spans"
solved="$dir/big-$spans.solved.db"
if [ ! -e "$solved.done" ]; then
  rm -f "$solved"*
  cp "$built" "$solved"
  work=$(mktemp -d /tmp/meridian-sql-XXXXXX)
  coproc COLLECTOR { exec "$bin/collector/meridian-collector" --listen 127.0.0.1:0 \
    --db "$solved" --sync normal --refresh-after-ms 100 \
    --metrics 127.0.0.1:0 2>"$work/collector.log"; }
  collector_pid=$COLLECTOR_PID
  read -r _ <&"${COLLECTOR[0]}"
  wait_refreshed "$(metrics_url "$work/collector.log")" 3600
  kill -TERM "$collector_pid"
  wait "$collector_pid" || true
  rm -rf "$work"
  touch "$solved.done"
fi
now() { date +%s%N; }
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
sql() { sqlite3 -readonly "$solved" ".load $bin/query/sql/libmeridian_sqlite.so" "$@"; }
rank_query="SELECT count(*), sum(dur_ns) FROM spans WHERE job = 'big' AND rank = 3 AND step BETWEEN 10 AND 19"
scan_ms=() whole_ms=() rank_ms=()
for ((r = 1; r <= rounds; r++)); do
  t=$(now); scan=$("$bin/bench/store_scan" "$solved" big); scan_ms+=($(( ($(now) - t) / 1000000 )))
  t=$(now); whole=$(sql "SELECT count(*), sum(dur_ns) FROM spans WHERE job = 'big'"); whole_ms+=($(( ($(now) - t) / 1000000 )))
  t=$(now); rank=$(sql "$rank_query" "SELECT meridian_scan_stats()"); rank_ms+=($(( ($(now) - t) / 1000000 )))
done
job_spans=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["spans"])' "$scan")
whole_spans=${whole%%|*}
[ "$whole_spans" = "$job_spans" ] || { echo "sql_bench: spans counts $whole_spans rows, Store::Scan $job_spans spans" >&2; exit 1; }
stats=$(tail -1 <<<"$rank")
read -r chunks_read chunks < <(python3 -c 'import json,sys; s=json.loads(sys.argv[1]); print(s["chunks_read"], s["chunks"])' "$stats")
# The chunks that can hold rank 3's spans of steps 10-19: of its tracks,
# with a step range that meets [10, 19].
want_chunks=$(sqlite3 -readonly "$solved" "SELECT count(*) FROM main.chunks c
  JOIN main.tracks t ON t.id = c.track JOIN main.processes p ON p.id = t.process
  JOIN main.jobs j ON j.id = p.job WHERE j.name = 'big' AND p.rank = 3
  AND c.min_step IS NOT NULL AND c.max_step >= 10 AND c.min_step <= 19")
sm=$(median "${scan_ms[@]}"); wm=$(median "${whole_ms[@]}"); rm_=$(median "${rank_ms[@]}")
scan_rate=$(( job_spans * 1000 / (sm > 0 ? sm : 1) ))
whole_rate=$(( job_spans * 1000 / (wm > 0 ? wm : 1) ))
echo "job big: $job_spans spans, $ranks ranks on $nodes nodes, $steps steps ($solved)"
echo "whole job (median of $rounds): Store::Scan ${sm} ms ($scan_rate spans/s); SQL count(*), sum(dur_ns) ${wm} ms ($whole_rate spans/s, corrected)"
echo "rank 3, steps 10-19: ${rm_} ms, ${rank%%$'\n'*}; decoded $chunks_read of $chunks chunks (the chunks of rank 3 that hold those steps: $want_chunks)"
echo "{\"bench\": \"sql\", \"spans\": $job_spans, \"scan_ms\": $sm, \"scan_spans_per_s\": $scan_rate, \"whole_ms\": $wm, \"whole_spans_per_s\": $whole_rate, \"rank_steps_ms\": $rm_, \"rank_chunks_read\": $chunks_read, \"rank_chunks_wanted\": $want_chunks, \"job_chunks\": $chunks}"
