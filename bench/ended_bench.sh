#!/usr/bin/env bash
# ./bench/run.sh ended [--runs N] [--steps N] [--collector PATH]: how soon
# after a traced job ends the collector has its step summaries and clock
# solution (its background refresh), for a user who queries the job then.
#
# A real collector (default flags: --refresh-after-ms 5000) and agent on this
# machine (bench/daemons.sh); the example (examples/data_parallel.cc, 4 ranks
# under `mpirun --oversubscribe`, --steps N, default 200) runs under
# `meridian run` --runs times (default 5), one after the other. After each
# run returns (every span acknowledged, so stored), the time until no
# refresh waits or runs (the collector's refresh_waiting gauge: the job's
# batches made it wait until its final refresh), polled every 10 ms (at
# most 60 s); then `meridian steps --json` must read every step
# from stored summaries ("summarised":0, nothing made by the query).
# JSON: after_run_ms (each run) and after_run_ms_median.
#
# --collector PATH runs that collector binary (an A/B of a collector change;
# a collector from before issue 47's end marks waits for quiet).
set -euo pipefail
shopt -s inherit_errexit
runs=5 steps=200 collector=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=${2:?--runs needs a number} ;;
    --steps) steps=${2:?--steps needs a number} ;;
    --collector) collector=${2:?--collector needs a path} ;;
    *) sed -n '2,3p' "$0" >&2; exit 2 ;;
  esac
  shift 2
done

bin="$(bazel info bazel-bin 2>/dev/null)"
collector=${collector:-$bin/collector/meridian-collector}
source "$(dirname "${BASH_SOURCE[0]}")/daemons.sh"
bench_work ended

export TMPDIR=/tmp  # Open MPI's session sockets need a short path
start_daemons "$collector"

# wait_refreshed T0: waits until no refresh waits or runs (the collector's
# refresh_waiting gauge is 0: the job's batches made it wait, so its final
# refresh has finished), then prints the ms since T0 (ns since the epoch);
# exit 1 after 60 s.
wait_refreshed() {
  python3 - "$metrics" "$1" <<'PY'
import sys, time, urllib.request
url, t0 = "http://%s/metrics" % sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    text = urllib.request.urlopen(url).read().decode()
    if "\nmeridian_collector_refresh_waiting 0\n" in text:
        print(round((time.time_ns() - t0) / 1e6))
        sys.exit(0)
    time.sleep(0.01)
sys.exit("ended_bench: the job's refresh did not end within 60 s of its run")
PY
}

ms=()
for ((i = 1; i <= runs; i++)); do
  job="ended-$i"
  MERIDIAN_AGENT_SOCKET="$socket" "${meridian[@]}" run --job "$job" -- \
    mpirun --allow-run-as-root --oversubscribe -np 4 \
    "$bin/examples/data_parallel" --steps "$steps" >/dev/null 2>>"$work/run.log"
  t0=$(date +%s%N)
  ms+=("$(wait_refreshed "$t0")")
  "${meridian[@]}" steps --job "$job" --json >"$work/steps.json"
  if ! grep -q '"summarised":0' "$work/steps.json"; then
    echo "ended_bench: job $job's first steps query made summaries" >&2
    exit 1
  fi
  echo "run $i: summaries and clocks stored ${ms[-1]} ms after the run returned" >&2
done
python3 - "${ms[@]}" <<'PY'
import json, statistics, sys
ms = [int(m) for m in sys.argv[1:]]
print(json.dumps({"after_run_ms": ms, "after_run_ms_median": statistics.median(ms)}))
PY
