#!/usr/bin/env bash
# ./bench/run.sh concurrent [--queries N] [--mib M] [--steps S]
# N queries of one kind at once (default 40) against a collector with
# --analysis-memory-mib M (default 16), for each kind in turn (export,
# critical-path, stragglers, stats, clocks), each against a fresh
# collector holding a synthetic 64-rank job of S steps (default 730:
# 280,384 spans): the collector's resident memory after the ingest and its
# peak (VmHWM) over the queries, the wall time of all N, and how many were
# refused (RESOURCE_EXHAUSTED, after --analysis-wait-ms). Last line: JSON.
# MERIDIAN_BENCH_COLLECTOR=PATH runs another build's collector (a before
# and after).
set -euo pipefail
cd "$(dirname "$0")/.."
queries=40 mib=16 steps=730
while [ $# -gt 0 ]; do
  case "$1" in
    --queries) queries=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) echo "concurrent_bench: unknown flag $1" >&2; exit 2 ;;
  esac
done
bazel build //collector:meridian-collector //cli:meridian //testing:meridian-synth >&2
bin="$(bazel info bazel-bin 2>/dev/null)"
collector_bin=${MERIDIAN_BENCH_COLLECTOR:-$bin/collector/meridian-collector}
work=$(mktemp -d /tmp/meridian-concurrent-XXXXXX)
collector_pid=""
cleanup() {
  [ -z "$collector_pid" ] || kill "$collector_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$collector_pid/status"; }
json="{\"queries\":$queries,\"analysis_memory_mib\":$mib"
for kind in export critical-path stragglers stats clocks; do
  rm -f "$work"/m.db*
  coproc COLLECTOR { exec "$collector_bin" --listen 127.0.0.1:0 \
    --db "$work/m.db" --sync normal --analysis-memory-mib "$mib" \
    --refresh-after-ms 0 2>"$work/collector.log"; }
  collector_pid=$COLLECTOR_PID
  read -r line <&"${COLLECTOR[0]}"
  addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
  "$bin/testing/meridian-synth" --collector "$addr" --job j --ranks 64 \
    --nodes 16 --steps "$steps" >/dev/null
  base=$(kib VmRSS)
  pids=()
  t=$(date +%s%N)
  for i in $(seq "$queries"); do
    case $kind in
      export) args=(export --job j -o "$work/x$i.json") ;;
      *) args=("$kind" --job j) ;;
    esac
    "$bin/cli/meridian" --collector "$addr" "${args[@]}" >/dev/null 2>"$work/err.$i" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
  wall_ms=$(( ($(date +%s%N) - t) / 1000000 ))
  refused=$(cat "$work"/err.* | grep -c "retry in a few seconds" || true)
  peak=$(kib VmHWM)
  echo "$kind: rss after ingest ${base} KiB, peak ${peak} KiB, ${wall_ms} ms, ${refused} refused" >&2
  json+=",\"${kind//-/_}\":{\"rss_after_ingest_kib\":$base,\"peak_kib\":$peak,\"wall_ms\":$wall_ms,\"refused\":$refused}"
  kill "$collector_pid"; wait "$collector_pid" 2>/dev/null || true
  collector_pid=""
  rm -f "$work"/x*.json
done
echo "$json}"
