#!/usr/bin/env bash
# One meridian-agent, hours of a node's life compressed: PROCESSES short
# traced processes, CONCURRENT at a time, each its own job (soak-N) with two
# threads of its own (tests/thread_churn_job 2 2 3: 6 spans, and the main
# thread's resource counters), through one agent into a real collector.
# After every SAMPLE processes it waits until the agent has delivered
# everything (meridian-agent --flush) and prints the agent's resident
# memory:
#   sample PROCESSES RSS_KIB
# and at the end: "agent: <its --status counters on one line>".
#
#   agent_soak.sh ROOT WORK PROCESSES CONCURRENT SAMPLE
# ROOT holds collector/meridian-collector, agent/meridian-agent,
# capture/probe/libmeridian_probe.so and tests/thread_churn_job (a bazel-bin
# or a runfiles tree); WORK is an empty directory. Used by
# tests/agent_soak_test.sh and ./bench/run.sh soak.
set -euo pipefail
root=$1 work=$2 processes=$3 concurrent=$4 sample=$5
socket="$work/agent.sock"

coproc COLLECTOR { exec "$root/collector/meridian-collector" --listen 127.0.0.1:0 --store "$work/soak.db" --refresh-after-ms 0 2>"$work/collector.log"; }
collector_pid=$COLLECTOR_PID
read -r line <&"${COLLECTOR[0]}" || { echo "collector did not start" >&2; exit 1; }
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
# No node counters: every span is counted.
coproc AGENT { exec "$root/agent/meridian-agent" --collector "$addr" --socket "$socket" --spool "$work/spool" \
  --node-counters-ms 0 2>"$work/agent.log"; }
agent_pid=$AGENT_PID
trap 'kill -9 $agent_pid $collector_pid 2>/dev/null || true' EXIT
read -r line <&"${AGENT[0]}" || { echo "agent did not start: $(tail -3 "$work/agent.log")" >&2; exit 1; }

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$agent_pid/status"; }
flush() {
  "$root/agent/meridian-agent" --flush --timeout 120 --socket "$socket" >"$work/flush.out" 2>&1 ||
    { echo "flush failed: $(cat "$work/flush.out")" >&2; exit 1; }
}

export MERIDIAN_AGENT_SOCKET="$socket"
probe="$root/capture/probe/libmeridian_probe.so"
job="$root/tests/thread_churn_job"
echo "sample 0 $(rss)"
started=0
while [ "$started" -lt "$processes" ]; do
  children=()
  for ((i = 0; i < concurrent && started < processes; i++)); do
    MERIDIAN_JOB="soak-$started" LD_PRELOAD="$probe" "$job" 2 2 3 >/dev/null &
    children+=($!)
    started=$((started + 1))
  done
  for child in "${children[@]}"; do
    wait "$child" || { echo "process failed" >&2; exit 1; }
  done
  if [ $((started % sample)) -eq 0 ] || [ "$started" -eq "$processes" ]; then
    flush
    echo "sample $started $(rss)"
  fi
done
echo "agent: $("$root/agent/meridian-agent" --status --socket "$socket" | tr '\n' ' ')"
