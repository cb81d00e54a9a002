#!/usr/bin/env bash
# `meridian waits` on a real Open MPI job whose waits are known
# (tests/waits_job.cc: 4 ranks, 10 steps of 61 ms, one wait of each
# pattern a step), under `meridian run`, through a real agent and
# collector: each pattern's waiting rank and time within 15 % or 15 ms of
# what the job builds in (its late ranks' computes, as it measured them), caused by the rank that computed meanwhile, in
# its "compute" phase; no other wait over 15 ms; per step and per rank;
# a bad range refused.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
agent_bin="$runfiles/agent/meridian-agent"
meridian_bin="$runfiles/cli/meridian"
job_bin="$runfiles/tests/waits_job"
work=$(mktemp -d /tmp/meridian-waits-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

start() {  # start NAME CMD...: its first output line in $line
  local name=$1
  shift
  mkfifo "$work/$name.fifo"
  "$@" >"$work/$name.fifo" 2>"$work/$name.log" &
  pids+=("$!")
  exec {fd}<"$work/$name.fifo"
  read -r line <&"$fd" || fail "$name did not start: $(cat "$work/$name.log")"
}
start collector "$collector_bin" --listen 127.0.0.1:0 --db "$work/m.db"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
start agent "$agent_bin" --collector "$addr" --socket "$work/agent.sock" \
  --spool "$work/spool" --node-counters-ms 0
export MERIDIAN_AGENT_SOCKET="$work/agent.sock"
unset LD_PRELOAD MERIDIAN_PROBE_LIB
meridian=("$meridian_bin" --collector "$addr")
mpirun=$(command -v mpirun.openmpi || command -v mpirun)

# `meridian run` returns once the agent has delivered the job's spans.
"${meridian[@]}" run --job waits -- "$mpirun" --allow-run-as-root \
  --oversubscribe -np 4 "$job_bin" 10 >"$work/job.out" 2>&1 ||
  { cat "$work/job.out" >&2; fail "the job"; }
grep -qx done "$work/job.out" || fail "the job did not end: $(cat "$work/job.out")"

"${meridian[@]}" waits --job waits --json >"$work/waits.json" || fail "meridian waits"
python3 - "$work/waits.json" "$work/job.out" <<'PY' || fail "waits: $(cat "$work/waits.json")"
import json, sys
w = json.load(open(sys.argv[1]))
MS = 1000000
# What each late rank's computes took as the machine ran them (a sleep on
# these 2 shared cores overruns by a few ms): the waits the job built in.
took = {}
for line in open(sys.argv[2]):
    if line.startswith("measured "):
        _, label, ns = line.split()
        took[label] = int(ns)
# (pattern, waiting rank): (ms a step, the rank that computed meanwhile)
built = {("late_sender", 0): (20, 1), ("late_receiver", 2): (15, 3)}
for r in (0, 1, 3): built[("wait_at_nxn", r)] = (10, 2)
for r in (0, 2, 3): built[("late_broadcast", r)] = (10, 1)
built[("early_reduce", 0)] = (11, 3)
for r in (1, 2, 3): built[("wait_at_barrier", r)] = (10, 0)
got = {(p["pattern"], p["rank"]): p for p in w["patterns"]}
assert all("step" not in p for p in w["patterns"]), w
assert sorted(took) == sorted({k[0] for k in built}), took
for key, (ms, by) in sorted(built.items()):
    want = took[key[0]]
    assert abs(want - 10 * ms * MS) <= 0.5 * 10 * ms * MS, (key, want)
    p = got.get(key)
    assert p is not None, ("missing", key)
    assert abs(p["wait_ns"] - want) <= max(0.15 * want, 15 * MS), (key, p)
    # One a step; on these 2 shared cores a rank is now and then
    # descheduled long enough to arrive after the late one (a step in a
    # run or two of six): then that step has not the wait built in.
    assert 8 <= p["instances"] <= 10, (key, p)
    cause = p["caused_by"][0]
    assert (cause["rank"], cause["in"]) == (by, "compute"), (key, p)
    print("waits_test: %s of rank %d: %.1f ms in 10 steps (built: %d, measured %.1f), by rank %d in %s"
          % (key[0], key[1], p["wait_ns"] / MS, 10 * ms, want / MS, cause["rank"], cause["in"]))
others = [p for k, p in got.items() if k not in built and p["wait_ns"] > 15 * MS]
assert not others, others
# Every rank's costs: rank 1 made the late send (20 ms) and the late root
# (3 x 10 ms) a step.
ranks = {r["rank"]: r for r in w["ranks"]}
assert sorted(ranks) == [0, 1, 2, 3], w["ranks"]
cost1 = ranks[1]["short_term_ns"] + ranks[1]["long_term_ns"]
want1 = took["late_sender"] + 3 * took["late_broadcast"]
assert abs(cost1 - want1) <= 0.15 * want1, (ranks[1], want1)
PY

# Per step, and one rank's.
"${meridian[@]}" waits --job waits --steps 2:3 --ranks 0 --json >"$work/steps.json" ||
  fail "meridian waits --steps"
python3 - "$work/steps.json" <<'PY' || fail "waits --steps: $(cat "$work/steps.json")"
import json, sys
w = json.load(open(sys.argv[1]))
MS = 1000000
assert {p["rank"] for p in w["patterns"]} == {0}, w
assert {p["step"] for p in w["patterns"]} <= {2, 3}, w
got = {(p["pattern"], p["step"]): p for p in w["patterns"]}
for step in (2, 3):
    p = got[("late_sender", step)]
    assert abs(p["wait_ns"] - 20 * MS) <= 15 * MS and p["instances"] == 1, p
    assert (p["caused_by"][0]["rank"], p["caused_by"][0]["in"]) == (1, "compute"), p
assert [r["rank"] for r in w["ranks"]] == [0], w
PY
"${meridian[@]}" waits --job waits >"$work/waits.txt" || fail "meridian waits (text)"
grep -q "^late_sender  *0  *all .* rank 1 in compute" "$work/waits.txt" ||
  fail "waits text: $(cat "$work/waits.txt")"

# A bad range and an unknown job: refused, the collector still serves.
if "${meridian[@]}" waits --job waits --steps 3:1 2>"$work/err.txt"; then
  fail "--steps 3:1 was taken"
fi
grep -q 'write FIRST:LAST, FIRST <= LAST' "$work/err.txt" || fail "$(cat "$work/err.txt")"
if "${meridian[@]}" waits --job nope 2>"$work/err.txt"; then fail "job nope"; fi
grep -q 'nope' "$work/err.txt" || fail "$(cat "$work/err.txt")"
"${meridian[@]}" waits --job waits --step 4 --json >/dev/null || fail "after the refusals"
echo "waits_test: passed"
