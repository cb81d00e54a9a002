#!/usr/bin/env bash
# ./bench/run.sh path [--spans N] [--ranks R] [--layers L] [--budget-mib M] [--dir DIR]
# A whole job's critical path loaded whole against walked a block of steps
# at a time (query/analysis/streamed_path.h). The job (default 4M spans: 64
# ranks on 16 nodes, L = 100 "layer" spans in forward and in backward, 50 us
# of jitter) is built once by `meridian-synth --store` into DIR (default
# /var/tmp/meridian-path)
# and copied for each collector. Two collectors on two copies: A with the
# default --analysis-memory-mib (4096: it loads the job whole), B with
# --analysis-memory-mib M (default 64: too small for the job, so it walks
# it in blocks). Each refreshes the job at start (clocks solved, summaries
# made) and the bench waits for both. Then 3 rounds, A and B alternated
# (which goes first alternates), of `critical-path --job J --json`: wall
# time, and each collector's peak resident memory over its path queries
# (VmHWM, reset before each); the JSON answers must be equal. A keeps the
# analysis it loaded for later queries of the job as it stands, so its
# first round (cold) is reported apart from the later ones (kept); B
# walks the blocks at every query. What a user pays for the whole-job
# path: the CLI's time, the collector's memory. Then the whole job's
# replay, A at once and B in blocks, 2 rounds alternated: time, peak
# memory, and whether the steps and the saving agree.
# Last line: JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/collector_metrics.sh
spans=4000000 ranks=64 layers=100 budget=64 dir=/var/tmp/meridian-path
while [ $# -gt 0 ]; do
  case "$1" in
    --spans) spans=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --budget-mib) budget=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "path_bench: unknown flag $1" >&2; exit 2 ;;
  esac
done
bazel build //collector:meridian-collector //cli:meridian //testing:meridian-synth >&2
bin="$(bazel info bazel-bin 2>/dev/null)"
nodes=$(( ranks / 4 ))
per_rank_step=$(( 6 + 2 * layers ))
steps=$(( (spans + ranks * per_rank_step - 1) / (ranks * per_rank_step) ))
mkdir -p "$dir"
built="$dir/path-$spans-$ranks-$layers.db"
if [ ! -e "$built.done" ]; then
  rm -f "$built"*
  "$bin/testing/meridian-synth" --store "$built" --job path --ranks "$ranks" \
    --nodes "$nodes" --steps "$steps" --layers "$layers" --jitter-ns 50000 >&2
  touch "$built.done"
fi
work=$(mktemp -d /tmp/meridian-path-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
now() { date +%s%N; }
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
start_collector() {  # start_collector NAME BUDGET_FLAG...
  local name=$1; shift
  cp "$built" "$work/$name.db"
  "$bin/collector/meridian-collector" --listen 127.0.0.1:0 --db "$work/$name.db" \
    --sync normal --refresh-after-ms 100 --metrics 127.0.0.1:0 "$@" \
    >"$work/$name.out" 2>"$work/$name.log" &
  pids+=($!)
  until grep -q "listening on" "$work/$name.out"; do sleep 0.05; done
}
start_collector a
start_collector b --analysis-memory-mib "$budget"
pid_a=${pids[0]} pid_b=${pids[1]}
addr_a=$(sed -E 's/.* on ([^,]+),.*/\1/' "$work/a.out")
addr_b=$(sed -E 's/.* on ([^,]+),.*/\1/' "$work/b.out")
wait_refreshed "$(metrics_url "$work/a.log")" 3600
wait_refreshed "$(metrics_url "$work/b.log")" 3600
hwm() { awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$1/status"; }
higher() { [ "$1" -ge "$2" ] && echo "$1" || echo "$2"; }
path() {  # path A|B ROUND: times one whole-job path, keeps the peak
  local addr pid t
  if [ "$1" = a ]; then addr=$addr_a pid=$pid_a; else addr=$addr_b pid=$pid_b; fi
  echo 5 >"/proc/$pid/clear_refs"
  t=$(now)
  "$bin/cli/meridian" --collector "$addr" critical-path --job path --json >"$work/$1-$2.json"
  echo "$(( ($(now) - t) / 1000000 )) $(hwm "$pid")"
}
a_ms=() b_ms=() a_hwm=0 b_hwm=0
for round in 1 2 3; do
  if [ $((round % 2)) -eq 1 ]; then order="a b"; else order="b a"; fi
  for side in $order; do
    read -r ms peak < <(path "$side" "$round")
    if [ "$side" = a ]; then a_ms+=("$ms"); a_hwm=$(higher "$a_hwm" "$peak")
    else b_ms+=("$ms"); b_hwm=$(higher "$b_hwm" "$peak"); fi
  done
done
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
a = [json.load(open(f"{w}/a-{r}.json")) for r in (1, 2, 3)]
b = [json.load(open(f"{w}/b-{r}.json")) for r in (1, 2, 3)]
strip = lambda p: {k: v for k, v in p.items() if k not in ("chunks_read", "chunks")}
for x in a + b:
    assert strip(x) == strip(a[0]), "the answers differ"
PY
# The whole job's replay (--scale backward=0.5), A at once, B a block of
# steps at a time (query/analysis/streamed_replay.h): 2 rounds, alternated.
replay() {  # replay A|B ROUND
  local addr pid t
  if [ "$1" = a ]; then addr=$addr_a pid=$pid_a; else addr=$addr_b pid=$pid_b; fi
  echo 5 >"/proc/$pid/clear_refs"
  t=$(now)
  "$bin/cli/meridian" --collector "$addr" replay --job path \
    --scale backward=0.5 --json >"$work/replay-$1-$2.json"
  echo "$(( ($(now) - t) / 1000000 )) $(hwm "$pid")"
}
ra_ms=() rb_ms=() ra_hwm=0 rb_hwm=0
for round in 1 2; do
  if [ "$round" -eq 1 ]; then order="a b"; else order="b a"; fi
  for side in $order; do
    read -r ms peak < <(replay "$side" "$round")
    if [ "$side" = a ]; then ra_ms+=("$ms"); ra_hwm=$(higher "$ra_hwm" "$peak")
    else rb_ms+=("$ms"); rb_hwm=$(higher "$rb_hwm" "$peak"); fi
  done
done
read -r replay_blocks replay_steps_equal replay_saving_equal \
  replay_step_diff replay_saving_a replay_saving_b < <(python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
a = json.load(open(f"{w}/replay-a-1.json"))
b = json.load(open(f"{w}/replay-b-1.json"))
# The largest difference of a step's predicted time, whole against blocks.
diff = max(abs(x["predicted_ns"] - y["predicted_ns"])
           for x, y in zip(a["steps"], b["steps"]))
print(b.get("blocks", 0), str(a["steps"] == b["steps"]).lower(),
      str(a["saving_ns"] == b["saving_ns"]).lower(), diff, a["saving_ns"],
      b["saving_ns"])
PY
)
read -r segments b_chunks chunks < <(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(len(p["segments"]), p["chunks_read"], p["chunks"])' "$work/b-1.json")
bytes=$(stat -c %s "$work/a-1.json")
a_cold=${a_ms[0]}; a_kept=$(( (a_ms[1] + a_ms[2]) / 2 )); bm=$(median3 "${b_ms[@]}")
job_spans=$("$bin/cli/meridian" --collector "$addr_a" jobs | awk '$1 == "path" {print $4}')
ratio=$(python3 -c "print(round($bm / $a_cold, 3))")
mem_ratio=$(python3 -c "print(round($b_hwm / $a_hwm, 3))")
echo "job path: $job_spans spans, $ranks ranks, $steps steps; path: $segments segments, $bytes bytes of JSON; the same answer loaded whole and in blocks"
echo "whole-job critical path: loaded whole ${a_cold} ms cold (then ${a_kept} ms from the kept analysis), peak RSS ${a_hwm} MB; in blocks (--analysis-memory-mib $budget) ${bm} ms (median of 3), peak RSS ${b_hwm} MB; blocks / whole (cold): time ${ratio}, memory ${mem_ratio}"
ra=$(( (ra_ms[0] + ra_ms[1]) / 2 )); rb=$(( (rb_ms[0] + rb_ms[1]) / 2 ))
echo "whole-job replay (--scale backward=0.5): at once ${ra} ms (mean of 2), peak RSS ${ra_hwm} MB; in $replay_blocks blocks ${rb} ms, peak RSS ${rb_hwm} MB; steps equal: $replay_steps_equal (largest difference of a step's predicted time ${replay_step_diff} ns), saving at once ${replay_saving_a} ns, in blocks ${replay_saving_b} ns"
echo "{\"bench\": \"path\", \"spans\": $job_spans, \"ranks\": $ranks, \"steps\": $steps, \"segments\": $segments, \"json_bytes\": $bytes, \"whole_cold_ms\": $a_cold, \"whole_kept_ms\": $a_kept, \"whole_hwm_mb\": $a_hwm, \"blocks_ms\": $bm, \"blocks_hwm_mb\": $b_hwm, \"budget_mib\": $budget, \"time_ratio\": $ratio, \"memory_ratio\": $mem_ratio, \"replay_whole_ms\": $ra, \"replay_whole_hwm_mb\": $ra_hwm, \"replay_blocks_ms\": $rb, \"replay_blocks_hwm_mb\": $rb_hwm, \"replay_blocks\": $replay_blocks, \"replay_steps_equal\": $replay_steps_equal, \"replay_step_diff_ns\": $replay_step_diff, \"replay_saving_whole_ns\": $replay_saving_a, \"replay_saving_blocks_ns\": $replay_saving_b}"
