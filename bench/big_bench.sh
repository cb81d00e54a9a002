#!/usr/bin/env bash
# ./bench/run.sh big [--spans N] [--dir DIR]
# Issue 23's 100M-span job in a collector. The job (default 100M spans):
# 256 ranks on 64 nodes, steps of 1,006 spans a rank (500 "layer" spans in
# forward and in backward: testing/synthetic_job.h), 50 us of jitter; built
# once by `meridian-synth --store` into DIR (default /var/tmp/meridian-big)
# and copied for each run, so every run starts from spans alone.
#
# A collector (SQLite, --sync normal, --refresh-after-ms 100) opens the copy
# and refreshes the job in the background, as it does every stored job at
# start: step summaries made, clocks solved. The bench waits for it (its
# metrics) and reports its wall time and CPU. It then resets the
# collector's peak resident memory (/proc/PID/clear_refs) and runs, 3
# rounds alternated: whole-job `steps` and `stragglers` (from the
# summaries), the middle step's `critical-path --step`, and `clocks` (the
# stored solution); medians, the collector's peak RSS over those queries
# (VmHWM) and over each one-step path alone (reset just before it: issue
# 23's 200 MB target). With --whole-path, then once the whole job's
# critical path (walked a block of steps at a time: the job is far over
# --analysis-memory-mib): its time, segments, and the collector's peak
# resident memory over it (reset just before). Last line: JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/collector_metrics.sh
source bench/big_job.sh
spans=100000000
dir=/var/tmp/meridian-big
whole_path=0
while [ $# -gt 0 ]; do
  case "$1" in
    --spans) spans=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --whole-path) whole_path=1; shift ;;
    *) echo "big_bench: unknown flag $1" >&2; exit 2 ;;
  esac
done
bazel build //collector:meridian-collector //cli:meridian //testing:meridian-synth >&2
bin="$(bazel info bazel-bin 2>/dev/null)"
build_big_job "$dir" "$spans"
work=$(mktemp -d /tmp/meridian-big-XXXXXX)
collector_pid=""
cleanup() {
  [ -z "$collector_pid" ] || kill "$collector_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cp "$built" "$work/m.db"
now() { date +%s%N; }
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
m() { "$bin/cli/meridian" --collector "$addr" "$@"; }
t=$(now)
coproc COLLECTOR { exec "$bin/collector/meridian-collector" --listen 127.0.0.1:0 \
  --db "$work/m.db" --sync normal --refresh-after-ms 100 \
  --metrics 127.0.0.1:0 2>"$work/collector.log"; }
collector_pid=$COLLECTOR_PID
read -r line <&"${COLLECTOR[0]}"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
url=$(metrics_url "$work/collector.log")
wait_refreshed "$url" 3600
refresh_ms=$(( ($(now) - t) / 1000000 ))
scrape "$url" >"$work/metrics.txt"
refresh_cpu_ms=$(awk '/^meridian_collector_refresh_seconds_total/ {printf "%d", $2 * 1000}' "$work/metrics.txt")
failed=$(awk -F' ' '/^meridian_collector_refreshes_total\{result="failed"\}/ {print $2}' "$work/metrics.txt")
refresh_hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$collector_pid/status")
[ "$failed" = "0" ] || { echo "big_bench: the refresh failed:" >&2; grep -i refresh "$work/collector.log" >&2; exit 1; }
job_spans=$(m jobs | awk '$1 == "big" {print $4}')
echo 5 >"/proc/$collector_pid/clear_refs"  # VmHWM from here: the queries'
rss_before=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$collector_pid/status")
step=$((steps / 2))
hwm() { awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$collector_pid/status"; }
# query_hwm: the peak over all the queries; path_hwm: the one-step path's
# own (VmHWM reset just before it), the figure issue 23's target is about.
query_hwm=0 path_hwm=0
higher() { [ "$1" -ge "$2" ] && echo "$1" || echo "$2"; }
steps_q=() stragglers_q=() path_q=() clocks_q=()
for round in 1 2 3; do
  t=$(now); m steps --job big --json >"$work/steps.json"; steps_q+=($(( ($(now) - t) / 1000000 )))
  t=$(now); m stragglers --job big >/dev/null; stragglers_q+=($(( ($(now) - t) / 1000000 )))
  query_hwm=$(higher "$query_hwm" "$(hwm)")
  echo 5 >"/proc/$collector_pid/clear_refs"
  t=$(now); m critical-path --job big --step "$step" >/dev/null; path_q+=($(( ($(now) - t) / 1000000 )))
  path_hwm=$(higher "$path_hwm" "$(hwm)")
  t=$(now); m clocks --job big >"$work/clocks.txt"; clocks_q+=($(( ($(now) - t) / 1000000 )))
done
query_hwm=$(higher "$query_hwm" "$(hwm)")
whole_ms=0 whole_hwm=0 whole_segments=0
if [ "$whole_path" = 1 ]; then
  echo 5 >"/proc/$collector_pid/clear_refs"
  t=$(now)
  m critical-path --job big --json >"$work/whole.json"
  whole_ms=$(( ($(now) - t) / 1000000 ))
  whole_hwm=$(hwm)
  whole_segments=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert sum(s["dur_ns"] for s in p["segments"]) == p["dur_ns"]; print(len(p["segments"]))' "$work/whole.json")
  echo "whole-job critical path, in blocks: ${whole_ms} ms, ${whole_segments} segments, $(( $(stat -c %s "$work/whole.json") >> 20 )) MB of JSON; collector peak RSS ${whole_hwm} MB over it"
fi
rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$collector_pid/status")
python3 - "$work/steps.json" "$steps" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["from_summaries"] and s["summarised"] == 0 and len(s["steps"]) == int(sys.argv[2]), \
    (s["from_summaries"], s["summarised"], len(s["steps"]))
PY
grep -q "stored solution" "$work/clocks.txt" || echo "big_bench: clocks did not read the stored solution" >&2
db_mb=$(( $(stat -c %s "$work/m.db") >> 20 ))
sq=$(median3 "${steps_q[@]}"); gq=$(median3 "${stragglers_q[@]}"); pq=$(median3 "${path_q[@]}"); cq=$(median3 "${clocks_q[@]}")
echo "job big: $job_spans spans, $ranks ranks on $nodes nodes, $steps steps; SQLite file $db_mb MB"
echo "background refresh: ${refresh_ms} ms from the collector's start (${refresh_cpu_ms} ms refreshing); collector peak RSS ${refresh_hwm} MB until then"
echo "queries (median of 3): steps ${sq} ms, stragglers ${gq} ms, critical path of step $step ${pq} ms, clocks ${cq} ms; collector RSS ${rss_before} MB before them, peak ${query_hwm} MB over them (${path_hwm} MB over a one-step path), ${rss} MB after"
echo "{\"bench\": \"big\", \"spans\": $job_spans, \"ranks\": $ranks, \"steps\": $steps, \"db_mb\": $db_mb, \"refresh_ms\": $refresh_ms, \"refresh_cpu_ms\": $refresh_cpu_ms, \"refresh_hwm_mb\": $refresh_hwm, \"steps_ms\": $sq, \"stragglers_ms\": $gq, \"step_path_ms\": $pq, \"clocks_ms\": $cq, \"rss_before_queries_mb\": $rss_before, \"query_hwm_mb\": $query_hwm, \"path_hwm_mb\": $path_hwm, \"rss_mb\": $rss, \"whole_path_ms\": $whole_ms, \"whole_path_segments\": $whole_segments, \"whole_path_hwm_mb\": $whole_hwm}"
