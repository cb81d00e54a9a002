#!/usr/bin/env bash
# ./bench/run.sh scale [--nodes "256 512 1024 2048 4096"] [--spans N]
# Queries of a synthetic job (4 ranks a node, about N spans, default
# 500,000, so only the node count changes) against a collector on this
# machine: `meridian clocks --resolve` (the clocks solved from the spans:
# scan, matching, refinement), `meridian export` with raw clocks,
# `meridian clocks` again (read from the solution the first stored) and
# `meridian export` with corrected clocks (also from the stored solution);
# and the queries of issue 23's targets: whole-job `steps` and `stragglers`
# (read from the step summaries), one step's `critical-path --step` and
# `export --steps`. Alternated in that order, the median of 3 each; and the
# collector's peak resident memory (VmHWM) over all of it. Last line: JSON.
#
# The collector refreshes the job in the background once it is quiet
# (`--refresh-after-ms 500`: clocks solved, step summaries made) before any
# query: the bench waits for that (its metrics) and reports its wall time
# from the last batch's ack (500 ms of quiet included) and its CPU, then
# the first `clocks` and `steps` queries, which read what it stored.
#
# First, for each node count, the answers right after the job is sent
# (issue 47): a collector with its default flags (the refresh 5 s after the
# last batch), the job sent, then at once `stragglers`, an export with
# corrected clocks and one with raw clocks, each timed once (JSON
# first_*_ms and their ratios to the raw export).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/collector_metrics.sh
node_counts="256 512 1024 2048 4096"
spans=500000
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) node_counts=$2; shift 2 ;;
    --spans) spans=$2; shift 2 ;;
    *) echo "scale_bench: unknown flag $1" >&2; exit 2 ;;
  esac
done
bazel build //collector:meridian-collector //cli:meridian //testing:meridian-synth >&2
bin="$(bazel info bazel-bin 2>/dev/null)"
work=$(mktemp -d /tmp/meridian-scale-XXXXXX)
collector_pid=""
cleanup() {
  [ -z "$collector_pid" ] || kill "$collector_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
now() { date +%s%N; }
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
json=""
for nodes in $node_counts; do
  ranks=$((nodes * 4))
  steps=$(( (spans + ranks * 6 - 1) / (ranks * 6) ))
  # Right after the job is sent, default flags.
  rm -f "$work"/f.db*
  coproc FIRST { exec "$bin/collector/meridian-collector" --listen 127.0.0.1:0 \
    --db "$work/f.db" --sync normal --max-streams 8192 2>"$work/first.log"; }
  collector_pid=$FIRST_PID
  read -r line <&"${FIRST[0]}"
  addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
  "$bin/testing/meridian-synth" --collector "$addr" --job scale --ranks "$ranks" \
    --nodes "$nodes" --steps "$steps" >"$work/synth.txt"
  t=$(now); "$bin/cli/meridian" --collector "$addr" stragglers --job scale --json >/dev/null; first_stragglers=$(( ($(now) - t) / 1000000 ))
  t=$(now); "$bin/cli/meridian" --collector "$addr" export --job scale -o "$work/c.json" >/dev/null 2>&1; first_export=$(( ($(now) - t) / 1000000 ))
  t=$(now); "$bin/cli/meridian" --collector "$addr" export --job scale --raw-clock -o "$work/raw.json" >/dev/null 2>&1; first_raw=$(( ($(now) - t) / 1000000 ))
  echo "$nodes nodes, right after the job was sent (default flags): stragglers ${first_stragglers} ms, export corrected ${first_export} ms, raw ${first_raw} ms"
  kill -TERM "$collector_pid"; wait "$collector_pid" || true; collector_pid=""

  rm -f "$work"/m.db*
  coproc COLLECTOR { exec "$bin/collector/meridian-collector" --listen 127.0.0.1:0 \
    --db "$work/m.db" --sync normal --max-streams 8192 --refresh-after-ms 500 \
    --metrics 127.0.0.1:0 2>"$work/collector.log"; }
  collector_pid=$COLLECTOR_PID
  read -r line <&"${COLLECTOR[0]}"
  addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
  "$bin/testing/meridian-synth" --collector "$addr" --job scale --ranks "$ranks" \
    --nodes "$nodes" --steps "$steps" >"$work/synth.txt"
  t=$(now)
  url=$(metrics_url "$work/collector.log")
  wait_refreshed "$url" 600
  refresh_ms=$(( ($(now) - t) / 1000000 ))
  refresh_cpu_ms=$(scrape "$url" | awk '/^meridian_collector_refresh_seconds_total/ {printf "%d", $2 * 1000}')
  t=$(now); "$bin/cli/meridian" --collector "$addr" clocks --job scale >"$work/first_clocks.txt"; clocks_first=$(( ($(now) - t) / 1000000 ))
  grep -q "stored solution" "$work/first_clocks.txt" || echo "scale_bench: the first clocks query solved" >&2
  t=$(now); "$bin/cli/meridian" --collector "$addr" steps --job scale --json >"$work/first_steps.json"; steps_first=$(( ($(now) - t) / 1000000 ))
  grep -q '"summarised":0' "$work/first_steps.json" || echo "scale_bench: the first steps query made summaries" >&2
  raw=() corrected=() solve=() stored=() path=() step_export=() steps_q=() stragglers_q=()
  stored_reads=0
  step=$((steps / 2))
  for round in 1 2 3; do
    t=$(now); "$bin/cli/meridian" --collector "$addr" clocks --job scale --resolve >"$work/clocks.txt"; solve+=($(( ($(now) - t) / 1000000 )))
    t=$(now); "$bin/cli/meridian" --collector "$addr" export --job scale --raw-clock -o "$work/raw.json" >/dev/null 2>&1; raw+=($(( ($(now) - t) / 1000000 )))
    t=$(now); "$bin/cli/meridian" --collector "$addr" clocks --job scale >"$work/stored.txt"; stored+=($(( ($(now) - t) / 1000000 )))
    if grep -q "stored solution" "$work/stored.txt"; then stored_reads=$((stored_reads + 1)); fi
    t=$(now); "$bin/cli/meridian" --collector "$addr" export --job scale -o "$work/c.json" >/dev/null 2>&1; corrected+=($(( ($(now) - t) / 1000000 )))
  done
  # After the clocks rounds (a kept analysis would answer `clocks` from
  # memory instead of the stored solution).
  for round in 1 2 3; do
    # Whole-job steps and stragglers, from the step summaries.
    t=$(now); "$bin/cli/meridian" --collector "$addr" steps --job scale >/dev/null; steps_q+=($(( ($(now) - t) / 1000000 )))
    t=$(now); "$bin/cli/meridian" --collector "$addr" stragglers --job scale >/dev/null; stragglers_q+=($(( ($(now) - t) / 1000000 )))
    t=$(now); "$bin/cli/meridian" --collector "$addr" critical-path --job scale --step "$step" >/dev/null; path+=($(( ($(now) - t) / 1000000 )))
    t=$(now); "$bin/cli/meridian" --collector "$addr" export --job scale --steps "$step" -o "$work/step.json" >/dev/null 2>&1; step_export+=($(( ($(now) - t) / 1000000 )))
  done
  r=$(median3 "${raw[@]}"); c=$(median3 "${corrected[@]}"); k=$(median3 "${solve[@]}"); s=$(median3 "${stored[@]}")
  p=$(median3 "${path[@]}"); e=$(median3 "${step_export[@]}")
  job_spans=$(grep -oE '\(([0-9]+) spans\)' "$work/synth.txt" | grep -oE '[0-9]+' | head -1 || echo 0)
  echo "$nodes nodes, $ranks ranks, $steps steps ($job_spans spans): export raw ${r} ms, corrected ${c} ms (clocks from the stored solution); clocks solved ${k} ms, read stored ${s} ms ($stored_reads of 3 read the stored solution)"
  hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$collector_pid/status")
  sq=$(median3 "${steps_q[@]}"); gq=$(median3 "${stragglers_q[@]}")
  echo "  background refresh ${refresh_ms} ms after the last batch (${refresh_cpu_ms} ms of it refreshing); then the first clocks ${clocks_first} ms and steps ${steps_first} ms read what it stored"
  echo "  step $step: critical path ${p} ms, export ${e} ms; whole job: steps ${sq} ms, stragglers ${gq} ms (from the summaries); collector peak RSS ${hwm} MB"
  grep -iE 'constraint|violation|refine' "$work/clocks.txt" | sed 's/^/  clocks: /' || true
  json="$json${json:+, }\"$nodes\": {\"ranks\": $ranks, \"spans\": $job_spans, \"export_raw_ms\": $r, \"export_corrected_ms\": $c, \"clocks_solve_ms\": $k, \"clocks_stored_ms\": $s, \"stored_reads\": $stored_reads, \"step_path_ms\": $p, \"step_export_ms\": $e, \"refresh_ms\": $refresh_ms, \"refresh_cpu_ms\": $refresh_cpu_ms, \"clocks_first_ms\": $clocks_first, \"steps_first_ms\": $steps_first, \"steps_ms\": $sq, \"stragglers_ms\": $gq, \"collector_hwm_mb\": $hwm, \"first_stragglers_ms\": $first_stragglers, \"first_export_ms\": $first_export, \"first_raw_export_ms\": $first_raw, \"first_stragglers_over_raw\": $(awk -v a="$first_stragglers" -v b="$first_raw" 'BEGIN {printf "%.2f", a / b}'), \"first_export_over_raw\": $(awk -v a="$first_export" -v b="$first_raw" 'BEGIN {printf "%.2f", a / b}')}"
  kill -TERM "$collector_pid"; wait "$collector_pid" || true; collector_pid=""
done
echo "{\"bench\": \"scale\", \"nodes\": {$json}}"
