#!/usr/bin/env bash
# ./bench/run.sh probe: the probe's cost per recorded MPI call, and the
# slowdown of a 4-rank loop of 8-byte MPI_Allreduce traced against
# untraced. A real collector and agent run on a temporary directory; the
# jobs run under `meridian run` and mpirun. See capture/probe/probe_bench.cc for the
# method; prints the figures, then one JSON line. --collector PATH runs that
# collector binary instead of the tree's (an A/B of a collector change).
set -euo pipefail
bin="$(bazel info bazel-bin 2>/dev/null)"
collector_bin="$bin/collector/meridian-collector"
case "${1:-}" in
  "") ;;
  --collector) collector_bin=${2:?--collector needs a path} ;;
  *) echo "usage: ./bench/run.sh probe [--collector PATH]" >&2; exit 2 ;;
esac
work="$(mktemp -d /tmp/meridian-bench-XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; cat "$work"/*.log >&2; rm -rf "$work"' EXIT
mpirun=(mpirun --allow-run-as-root --oversubscribe)
export TMPDIR=/tmp MERIDIAN_AGENT_SOCKET="$work/agent.sock"

coproc collector { exec "$collector_bin" --listen 127.0.0.1:0 \
  --db "$work/bench.db" --metrics 127.0.0.1:0 2>"$work/collector.log"; }
read -r line <&"${collector[0]}"
address="${line#*listening on }"
address="${address%%,*}"
coproc agent { exec "$bin/agent/meridian-agent" --collector "$address" \
  --socket "$MERIDIAN_AGENT_SOCKET" --spool "$work/spool" 2>"$work/agent.log"; }
read -r line <&"${agent[0]}"

traced() {  # JOB ARGS...: the JSON line of a traced probe_bench run
  local job=$1
  shift
  "$bin/cli/meridian" --collector "$address" run --job "$job" -- \
    "${mpirun[@]}" "$@" 2>>"$work/run.log" | tail -1
}

# Rings large enough that the 1M-call loop never outruns the agent's reads:
# a dropped record costs less than a recorded one.
event=$(MERIDIAN_RING_RECORDS=2097152 traced bench-event -np 1 \
  -x MERIDIAN_RING_RECORDS "$bin/capture/probe/probe_bench" --event)
echo "per recorded call (1 rank, MPI_COMM_SELF): $event" >&2
interleaved=$(traced bench-allreduce -np 4 "$bin/capture/probe/probe_bench" --allreduce)
echo "4 ranks, interleaved in one job: $interleaved" >&2
separate=()
for i in 1 2 3; do
  u=$("${mpirun[@]}" -np 4 "$bin/capture/probe/probe_bench" --allreduce --untraced-only | tail -1)
  t=$(traced "bench-separate-$i" -np 4 "$bin/capture/probe/probe_bench" --allreduce)
  echo "4 ranks, separate jobs, pair $i: untraced $u traced $t" >&2
  separate+=("$u" "$t")
done
status=$("$bin/agent/meridian-agent" --status)
echo "$status" | sed 's/^/agent: /' >&2
source "$(dirname "${BASH_SOURCE[0]}")/process_cpu.sh"  # cpu_ticks, thread_ticks, ticks_ns
source "$(dirname "${BASH_SOURCE[0]}")/collector_metrics.sh"  # wait_refreshed
metrics_at=$(metrics_url "$work/collector.log")
wait_refreshed "$metrics_at" 120
refreshes=$(scrape "$metrics_at" |
  sed -n 's/^meridian_collector_refreshes_total{result="done"} //p')
agent_cpu=$(ticks_ns "$(cpu_ticks "$agent_PID")")
collector_cpu=$(ticks_ns "$(cpu_ticks "$collector_PID")")
# Of it, the background refresh's (its "refresh" thread): each job's
# clocks and summaries, once its processes ended (or 5 s after its last
# batch). Every job's is counted: the CPU times are read once none waits.
refresh_cpu=$(ticks_ns "$(thread_ticks "$collector_PID" refresh)")
echo "CPU time: agent $agent_cpu ns, collector $collector_cpu ns (refresh $refresh_cpu ns)" >&2
# The probe alone: a second agent that reads its rings only after the loop
# (every 60 s, and when the processes exit), so that its work and the
# collector's do not compete with the 4 ranks for this machine's cores.
# `meridian run` returns once the collector has stored a job's spans, so
# the next job starts on a quiet machine. (It runs after the CPU times
# above were taken: its spans would inflate the collector's.)
mkfifo "$work/lazy.ready"
"$bin/agent/meridian-agent" --collector "$address" --drain-ms 60000 --max-drain-ms 60000 \
  --socket "$work/lazy.sock" --spool "$work/lazy-spool" \
  >"$work/lazy.ready" 2>"$work/lazy.log" &
read -r line <"$work/lazy.ready"
# Five jobs of 201 rounds (402,000 calls per rank; rings of 524,288 records,
# so none is dropped): on a shared machine one job's figure moves by a
# percent, the median of five much less.
probe_only=()
for i in 1 2 3 4 5; do
  probe_only+=("$(MERIDIAN_AGENT_SOCKET="$work/lazy.sock" MERIDIAN_RING_RECORDS=524288 \
    traced "bench-probe-only-$i" -np 4 -x MERIDIAN_RING_RECORDS \
    "$bin/capture/probe/probe_bench" --allreduce --rounds 201)")
  echo "4 ranks, interleaved, agent reading after the loop, job $i: ${probe_only[-1]}" >&2
done

python3 - "$event" "$interleaved" "${probe_only[@]}" "${separate[@]}" "$status" \
  "$agent_cpu" "$collector_cpu" "$refresh_cpu" "$refreshes" <<'PY'
import json, statistics, sys
event = json.loads(sys.argv[1])
inter = json.loads(sys.argv[2])
probe_only = [json.loads(a)["ratio"] - 1 for a in sys.argv[3:8]]
pairs = [json.loads(a) for a in sys.argv[8:14]]
status = dict(l.split(" ", 1) for l in sys.argv[14].splitlines())
agent_cpu, collector_cpu = int(sys.argv[15]), int(sys.argv[16])
refresh_cpu = int(sys.argv[17])
refreshes = int(float(sys.argv[18]))
untraced = statistics.median(p["untraced_ns"] for p in pairs[0::2])
traced = statistics.median(p["traced_ns"] for p in pairs[1::2])
print(json.dumps({
    "probe_event_ns_median": event["extra_ns"],
    "allreduce_untraced_ns": inter["untraced_ns"],
    "allreduce_traced_ns": inter["traced_ns"],
    "allreduce_slowdown_probe_only": round(statistics.median(probe_only), 4),
    "allreduce_slowdown_probe_only_jobs": [round(r, 4) for r in probe_only],
    "allreduce_slowdown_interleaved": round(inter["ratio"] - 1, 4),
    "allreduce_slowdown_separate_jobs": round(traced / untraced - 1, 4),
    "spans_received": int(status["received"]),
    # What the pipeline costs per span, in CPU time of the main agent (it
    # received every span but the probe-only job's) and of the collector.
    "agent_cpu_ns_per_span": round(agent_cpu / int(status["received"])),
    "collector_cpu_ns_per_span": round(collector_cpu / int(status["received"])),
    # Of it, the refresh thread's (every job's, `refreshes` of them) and
    # the rest (ingest and storing).
    "collector_refresh_cpu_ns_per_span": round(refresh_cpu / int(status["received"])),
    "refreshes_done": refreshes,
    "collector_ingest_cpu_ns_per_span":
        round((collector_cpu - refresh_cpu) / int(status["received"])),
    "spans_dropped": int(status["dropped"]),
}))
PY
