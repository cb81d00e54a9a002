#!/usr/bin/env bash
# ./bench/run.sh colocated [--pairs N] [--steps N] [--rounds N]
# [--collector PATH]: what tracing costs a job when the whole pipeline
# (probe, agent, collector) runs on the job's own machine, as in the
# quickstart.
#
# A real collector (127.0.0.1, a store in a temporary directory) and agent
# stay up throughout. Two programs run on 4 ranks: the example
# (examples/data_parallel.cc, --print-loop-ns) and a plain loop of 8-byte
# MPI_Allreduce (capture/probe/probe_bench.cc --loop). Each runs untraced (plain
# mpirun: no probe, no LD_PRELOAD) and traced (`meridian run -- mpirun`), in
# --pairs pairs (default 5) whose order alternates (U T, T U, U T, ...: a
# drift of the machine favours neither). What is compared is the program's
# own loop time (`loop_ns=`, between barriers); *_ratio is the median over
# pairs of traced / untraced. --steps and --rounds default to what makes one
# untraced loop take about 1.5 s, from a short untraced run of each.
#
# The pipeline's cost: user + system CPU time of the agent and of the
# collector (/proc/PID/stat, all their threads) from just before to just
# after each traced run (including `meridian run`'s wait until every span is
# acknowledged, that is, stored), over the spans the collector stored for
# those jobs (`meridian jobs`); for each program and for both together.
# Work the collector does for a job after its run (its background refresh,
# once its processes have ended, or 5 s after its last batch) lands in
# whichever run comes next, traced or not, or in this run's own window: the *_all figures count the daemons' CPU over the whole bench
# instead, from the first pair to the end of the last refresh (the
# collector's refresh_waiting gauge back to 0), untraced runs included,
# over every span; refresh_cpu_ns_per_span_all is its "refresh" thread's.
# bytes_per_span: the store (file + -wal, after the collector has stopped and
# the WAL is checkpointed) over every span stored; table_bytes: each table's
# and index's pages (sqlite3's dbstat, so free pages are in neither), and
# derived_bytes_over_span_bytes the derived tables (clock evidence and
# solutions, step summaries and their state) over the span chunks'.
#
# Left out: the job's start and end (mpirun, MPI_Init and the probe's
# registration, MPI_Finalize, the drain after the job) are outside the loop
# time, though the agent's and collector's CPU for them is in the per-span
# figures; the CPU of `meridian run` itself and of kernel threads (page-cache
# writeback; the fsyncs' wait is no CPU) is counted nowhere; the agent's and
# collector's idle work (clock sync, control polls) runs during untraced
# jobs too, so the ratios do not count it (the CPU figures do, for the
# traced runs' duration); memory is not measured; spans travel over
# loopback only, not a network. The collector shares the job's cores here:
# on a cluster it runs on the head node, so the ratios overstate what a
# node pays for it.
#
# --collector PATH runs that collector binary instead of the tree's (an A/B
# of a collector change: the same bench, the collector built before it).
set -euo pipefail
shopt -s inherit_errexit  # a failing command inside $(...) fails it too
pairs=5 steps="" rounds="" collector=""
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs=${2:?--pairs needs a number} ;;
    --steps) steps=${2:?--steps needs a number} ;;
    --rounds) rounds=${2:?--rounds needs a number} ;;
    --collector) collector=${2:?--collector needs a path} ;;
    *) sed -n '2,3p' "$0" >&2; exit 2 ;;
  esac
  shift 2
done

bin="$(bazel info bazel-bin 2>/dev/null)"
collector=${collector:-$bin/collector/meridian-collector}
source "$(dirname "${BASH_SOURCE[0]}")/daemons.sh"
bench_work colocated

# Open MPI keeps its session sockets under TMPDIR, which must be short.
export TMPDIR=/tmp
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 4)
start_daemons "$collector"

source "$(dirname "${BASH_SOURCE[0]}")/process_cpu.sh"  # cpu_ticks, thread_ticks
dropped() {  # the spans the agent dropped so far
  "$bin/agent/meridian-agent" --status --socket "$socket" | awk '$1 == "dropped" { print $2 }'
}
loop_ns() {  # FILE: the loop_ns=N the program printed
  local ns
  ns=$(sed -n 's/^loop_ns=\([0-9][0-9]*\)$/\1/p' "$1" | tail -1)
  if [ -z "$ns" ]; then
    echo "colocated_bench: no loop_ns= line from the program:" >&2
    cat "$1" >&2
    return 1
  fi
  echo "$ns"
}
untraced() {  # ARGS...: the loop time of a plain mpirun job
  env -u LD_PRELOAD -u MERIDIAN_AGENT_SOCKET "${mpirun[@]}" "$@" \
    >"$work/job.out" 2>>"$work/mpirun.log"
  loop_ns "$work/job.out"
}
# JOB ARGS...: runs a traced job; sets ns (its loop time), agent_ticks,
# collector_ticks (refresh_ticks of them the collector's background
# refresh: its "refresh" thread) and drops (its share of the agent's
# dropped spans).
traced() {
  local job=$1 d0 a0 c0 r0
  shift
  d0=$(dropped)
  a0=$(cpu_ticks "$agent_pid")
  c0=$(cpu_ticks "$collector_pid")
  r0=$(thread_ticks "$collector_pid" refresh)
  MERIDIAN_AGENT_SOCKET="$socket" "${meridian[@]}" run --job "$job" -- \
    "${mpirun[@]}" "$@" >"$work/job.out" 2>>"$work/run.log"
  agent_ticks=$(($(cpu_ticks "$agent_pid") - a0))
  collector_ticks=$(($(cpu_ticks "$collector_pid") - c0))
  refresh_ticks=$(($(thread_ticks "$collector_pid" refresh) - r0))
  drops=$(($(dropped) - d0))
  ns=$(loop_ns "$work/job.out")
}

example=("$bin/examples/data_parallel" --print-loop-ns --steps)
allreduce8=("$bin/capture/probe/probe_bench" --loop)
target_ns=1500000000
# The first runs also warm the page cache and MPI.
if [ -z "$steps" ]; then
  ns=$(untraced "${example[@]}" 200)
  steps=$((target_ns * 200 / ns > 20 ? target_ns * 200 / ns : 20))
fi
if [ -z "$rounds" ]; then
  ns=$(untraced "${allreduce8[@]}" 20000)
  rounds=$((target_ns * 20000 / ns > 1000 ? target_ns * 20000 / ns : 1000))
fi
echo "example: $steps steps; allreduce8: $rounds rounds; $pairs pairs" >&2

# The whole bench's CPU, from here (see *_all above).
all_agent0=$(cpu_ticks "$agent_pid")
all_collector0=$(cpu_ticks "$collector_pid")
all_refresh0=$(thread_ticks "$collector_pid" refresh)
# One line per run: program pair mode loop_ns job agent_ticks collector_ticks
# drops refresh_ticks
results="$work/results.txt"
: >"$results"
for ((i = 1; i <= pairs; i++)); do
  order=(untraced traced)
  ((i % 2)) || order=(traced untraced)
  for program in example allreduce8; do
    if [ "$program" = example ]; then
      args=("${example[@]}" "$steps")
    else
      args=("${allreduce8[@]}" "$rounds")
    fi
    for mode in "${order[@]}"; do
      if [ "$mode" = untraced ]; then
        ns=$(untraced "${args[@]}")
        echo "$program $i untraced $ns - 0 0 0 0" >>"$results"
        echo "$program pair $i: untraced $ns ns" >&2
      else
        job="colocated-$program-$i"
        traced "$job" "${args[@]}"
        echo "$program $i traced $ns $job $agent_ticks $collector_ticks $drops" \
          "$refresh_ticks" >>"$results"
        echo "$program pair $i: traced $ns ns; CPU ticks agent $agent_ticks," \
          "collector $collector_ticks (refresh $refresh_ticks); dropped $drops" >&2
      fi
    done
  done
done

# The refreshes the last jobs started are the pipeline's cost too: wait
# until none is waiting or running (the collector's gauge; at most 300 s),
# and count the refresh thread's CPU meanwhile.
r0=$(thread_ticks "$collector_pid" refresh)
c0=$(cpu_ticks "$collector_pid")
python3 - "$metrics" <<'PY'
import sys, time, urllib.request
deadline = time.monotonic() + 300
while time.monotonic() < deadline:
    text = urllib.request.urlopen("http://%s/metrics" % sys.argv[1]).read().decode()
    waiting = [l for l in text.splitlines()
               if l.startswith("meridian_collector_refresh_waiting ")]
    if waiting and float(waiting[0].split()[1]) == 0:
        sys.exit(0)
    time.sleep(0.2)
sys.exit("colocated_bench: the collector's refreshes did not end within 300 s")
PY
tail_refresh_ticks=$(($(thread_ticks "$collector_pid" refresh) - r0))
tail_collector_ticks=$(($(cpu_ticks "$collector_pid") - c0))
all_ticks="$(($(cpu_ticks "$agent_pid") - all_agent0)) $(($(cpu_ticks "$collector_pid") - all_collector0)) $(($(thread_ticks "$collector_pid" refresh) - all_refresh0))"
refreshes=$(python3 -c '
import sys, urllib.request
text = urllib.request.urlopen("http://%s/metrics" % sys.argv[1]).read().decode()
print(sum(int(float(l.split()[1])) for l in text.splitlines()
          if l.startswith("meridian_collector_refreshes_total{result=\"done\"}")))
' "$metrics")
"${meridian[@]}" jobs >"$work/jobs.txt"
"$bin/agent/meridian-agent" --status --socket "$socket" >"$work/status.txt"
sed 's/^/jobs: /' "$work/jobs.txt" >&2
sed 's/^/agent: /' "$work/status.txt" >&2
# Stop both (SIGTERM: the collector commits everything and closes the store,
# which checkpoints its WAL); then checkpoint again in case a WAL is left.
for pid in "$agent_pid" "$collector_pid"; do
  kill -TERM "$pid"
  wait "$pid" || true
done
pids=()
wal_checkpointed=false
if command -v sqlite3 >/dev/null &&
  sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null 2>>"$work/sqlite3.log"; then
  wal_checkpointed=true
fi
wal_bytes=$([ -f "$db-wal" ] && stat -c %s "$db-wal" || echo 0)
store_bytes=$(($(stat -c %s "$db") + wal_bytes))
# Each table's bytes (name bytes per line); empty without dbstat.
sqlite3 "$db" 'SELECT name, SUM(pgsize) FROM dbstat GROUP BY name;' \
  >"$work/tables.txt" 2>>"$work/sqlite3.log" || : >"$work/tables.txt"

python3 - "$results" "$work/jobs.txt" "$work/status.txt" "$(getconf CLK_TCK)" \
  "$store_bytes" "$wal_bytes" "$wal_checkpointed" "$steps" "$rounds" \
  "$work/tables.txt" "$tail_refresh_ticks" "$tail_collector_ticks" \
  "$refreshes" "$all_ticks" <<'PY'
import json, statistics, sys
(results, jobs_file, status_file, tck, store_bytes, wal_bytes, checkpointed,
 steps, rounds, tables_file, tail_refresh, tail_collector,
 refreshes, all_ticks) = sys.argv[1:]
all_agent, all_collector, all_refresh = (int(t) for t in all_ticks.split())
tables = {}
for line in open(tables_file).read().splitlines():
    name, _, size = line.rpartition("|")
    tables[name] = int(size)
# What the collector derives from the spans (docs/wire-and-store.md).
derived = ("clock_evidence", "clock_solutions", "step_summaries",
           "summary_states")
tick_ns = 1e9 / int(tck)
spans = {}  # job -> spans stored (`meridian jobs`: JOB RANKS NODES SPANS ...)
for line in open(jobs_file).read().splitlines()[1:]:
    fields = line.split()
    if len(fields) >= 4:
        spans[fields[0]] = int(fields[3])
status = dict(l.split(" ", 1) for l in open(status_file).read().splitlines())
runs = [l.split() for l in open(results).read().splitlines()]
out = {}
total = {"spans": 0, "agent": 0, "collector": 0, "refresh": 0}
for program in ("example", "allreduce8"):
    untraced = {int(r[1]): int(r[3]) for r in runs if r[0] == program and r[2] == "untraced"}
    traced = [r for r in runs if r[0] == program and r[2] == "traced"]
    ratios = [int(r[3]) / untraced[int(r[1])] for r in traced]
    job_spans = [spans.get(r[4], 0) for r in traced]
    n = sum(job_spans)
    agent = sum(int(r[5]) for r in traced) * tick_ns
    collector = sum(int(r[6]) for r in traced) * tick_ns
    refresh = sum(int(r[8]) for r in traced) * tick_ns
    total["refresh"] += refresh
    total["spans"] += n
    total["agent"] += agent
    total["collector"] += collector
    out[f"{program}_ratio"] = round(statistics.median(ratios), 4)
    out[f"{program}_ratios"] = [round(r, 4) for r in ratios]
    out[f"{program}_untraced_ns"] = [untraced[int(r[1])] for r in traced]
    out[f"{program}_traced_ns"] = [int(r[3]) for r in traced]
    out[f"{program}_spans"] = job_spans
    out[f"{program}_spans_dropped"] = sum(int(r[7]) for r in traced)
    out[f"{program}_agent_cpu_ns_per_span"] = round(agent / n) if n else None
    out[f"{program}_collector_cpu_ns_per_span"] = round(collector / n) if n else None
    out[f"{program}_refresh_cpu_ns_per_span"] = round(refresh / n) if n else None
n = total["spans"]
out.update({
    "refreshes_done": int(refreshes),
    "refresh_after_last_run_cpu_ns": int(tail_refresh) * tick_ns,
    # The whole bench (untraced runs and the last refreshes included).
    "agent_cpu_ns_per_span_all": round(all_agent * tick_ns / n) if n else None,
    "collector_cpu_ns_per_span_all":
        round(all_collector * tick_ns / n) if n else None,
    "refresh_cpu_ns_per_span_all":
        round(all_refresh * tick_ns / n) if n else None,
    "pipeline_cpu_ns_per_span_all":
        round((all_agent + all_collector) * tick_ns / n) if n else None,
    # Both programs' traced runs together.
    "agent_cpu_ns_per_span": round(total["agent"] / n) if n else None,
    "collector_cpu_ns_per_span": round(total["collector"] / n) if n else None,
    # Of it, the background refresh's (clock solutions, step summaries):
    # the collector's "refresh" thread, whatever job it worked for.
    "refresh_cpu_ns_per_span": round(total["refresh"] / n) if n else None,
    "pipeline_cpu_ns_per_span":
        round((total["agent"] + total["collector"]) / n) if n else None,
    # The whole store (every table) over every span in it.
    "bytes_per_span": round(int(store_bytes) / n, 2) if n else None,
    "store_bytes": int(store_bytes),  # file + -wal
    "table_bytes": tables,
    "span_chunk_bytes": tables.get("chunks"),
    "derived_bytes": sum(tables.get(t, 0) for t in derived) if tables else None,
    "derived_bytes_over_span_bytes":
        round(sum(tables.get(t, 0) for t in derived) / tables["chunks"], 3)
        if tables.get("chunks") else None,
    "wal_bytes": int(wal_bytes),
    # Whether `sqlite3 DB 'PRAGMA wal_checkpoint(TRUNCATE)'` ran (after the
    # collector's own close, which checkpoints too).
    "wal_checkpointed": checkpointed == "true",
    "spans_stored": n,
    "spans_received": int(status["received"]),
    "spans_dropped": int(status["dropped"]),
    "steps": int(steps),
    "rounds": int(rounds),
    "cpu_tick_ns": tick_ns,
})
print(json.dumps(out))
PY
