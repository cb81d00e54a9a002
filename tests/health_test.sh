#!/usr/bin/env bash
# `meridian health` on real hung MPI jobs (tests/hang_job.cc under Open
# MPI's mpirun and `meridian run`), through a real agent and collector:
#   1. rank 2 stuck in its own code before the 10th MPI_Allreduce: stalled,
#      "missing" at seq 9, waiting [0, 1, 3], suspect [2], in no call, its
#      native stack at the line it is stuck on;
#   2. rank 2 in MPI_Bcast where the others are in MPI_Allreduce:
#      "mismatch", op MPI_Allreduce, rank 2 in MPI_Bcast;
#   3. two ranks sending to each other, rank 0 in MPI_Send and rank 1 in
#      MPI_Wait for its MPI_Isend: "p2p", both waiting, both suspect, rank
#      1's wait with its request's peer, tag, bytes and operation;
#   4. a job computing in a phase for longer than the threshold: running,
#      no stall, every rank in "solve"; then finished once it ends;
#   5. a job whose rank 1 computes 1.6 times as long from step 200: its
#      compute slowdown reported while it runs, no other rank, and the
#      collector's --on-slowdown run for it; the same loop unchanged: no
#      slowdown;
#   6. a pair of ranks whose exchange becomes slower from step 200 (the
#      same bytes in 256 pieces): reported as the link, not as its ranks;
#      the same exchange unchanged: no slowdown; and the node counters
#      the agent stored beside a job's spans;
# each reported while it hangs, read from `meridian health --watch --json`
# (one answer a second, at most 30); how soon (issue 51's target: the
# threshold, 2 s, plus 5 s) is measured by `./bench/run.sh health`, which
# runs this test on an otherwise idle machine and reads the "reported in"
# lines it prints (not asserted here: under a parallel test run on 2 cores
# it measures the load, not Meridian); the collector's
# own watch (--stall-after 2) ran its --on-stall hook once for each, with
# the same JSON, and meridian_job_stalled_seconds names them. The hung jobs
# run side by side and are killed by the test; the computing job is traced
# and stored beside them, and what the hung ones recorded is still there.
# Asking about a job that does not exist (at once, or after --watch has
# waited 10 s for it), or with a bad threshold: a clear error.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
agent_bin="$runfiles/agent/meridian-agent"
meridian_bin="$runfiles/cli/meridian"
job_bin="$runfiles/tests/hang_job"
slow_bin="$runfiles/tests/slow_job"
work=$(mktemp -d /tmp/meridian-health-XXXXXX)
pids=()
groups=()
cleanup() {
  for group in "${groups[@]}"; do kill -KILL -- "-$group" 2>/dev/null || true; done
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
mkfifo "$work/hooks.fifo"
# Open read-write: the hooks' lines wait in it whenever they come, and a
# read never sees end-of-file between two hooks.
exec {hooks_fd}<>"$work/hooks.fifo"
# No background refresh: on this machine's 2 cores it would compete with
# the jobs' ranks (on a cluster the collector has a node of its own).
start collector "$collector_bin" --listen 127.0.0.1:0 --db "$work/m.db" \
  --metrics 127.0.0.1:0 --stall-after 2 --refresh-after-ms 0 --summarise-every-ms 0 \
  --on-stall "cat > $work/hook.\$MERIDIAN_JOB.json && echo \$MERIDIAN_JOB > $work/hooks.fifo" \
  --on-slowdown "cat > $work/slow-hook.\$MERIDIAN_JOB.json && echo slow \$MERIDIAN_JOB > $work/hooks.fifo"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
start agent "$agent_bin" --collector "$addr" --socket "$work/agent.sock" --spool "$work/spool" \
  --stack-after-ms 1000
export MERIDIAN_AGENT_SOCKET="$work/agent.sock"
unset LD_PRELOAD MERIDIAN_PROBE_LIB
meridian=("$meridian_bin" --collector "$addr")
# Open MPI's mpirun whatever Debian's alternatives say.
mpirun=$(command -v mpirun.openmpi || command -v mpirun)

# launch JOB NP MODE [ARGS...]: the job (hang_job, or $prog) in a process
# group of its own, reading its output from $work/JOB.fifo (fd in $job_fd).
launch() {
  local job=$1 np=$2
  shift 2
  mkfifo "$work/$job.fifo"
  setsid "${meridian[@]}" run --job "$job" -- "$mpirun" --allow-run-as-root \
    --oversubscribe -np "$np" "${prog:-$job_bin}" "$@" >"$work/$job.fifo" 2>&1 &
  groups+=("$!")
  exec {job_fd}<"$work/$job.fifo"
}
# until_said FD WHAT: reads FD's lines until one is WHAT.
until_said() {
  local fd=$1 what=$2 said
  while read -r said <&"$fd"; do [ "$said" = "$what" ] && return 0; done
  fail "the job ended before saying \"$what\""
}
now_ms() { date +%s%3N; }
watches=0

# watch_until JOB CHECK: `meridian health --watch --json` of JOB until an
# answer passes the Python expression CHECK (over `h`, the answer), at
# most 30 answers; that answer in $work/JOB.health.
watch_until() {
  local job=$1 check=$2 answer
  watches=$((watches + 1))
  local fifo="$work/watch.$job.$watches"
  mkfifo "$fifo"
  "${meridian[@]}" health --job "$job" --stall-after 2 --watch --json >"$fifo" &
  local watcher=$!
  exec {watch_fd}<"$fifo"
  for _ in $(seq 30); do
    read -r answer <&"$watch_fd" || break
    if python3 -c "import json, sys; h = json.loads(sys.argv[1]); sys.exit(0 if ($check) else 1)" \
      "$answer"; then
      printf '%s\n' "$answer" >"$work/$job.health"
      kill "$watcher" 2>/dev/null || true
      exec {watch_fd}<&-
      return 0
    fi
  done
  kill "$watcher" 2>/dev/null || true
  fail "$job: no health answer passed ($check); the last: $answer"
}

# 1-3, side by side: each hangs at once; each watched from then on.
launch hang-stuck 4 stuck
stuck_fd=$job_fd
launch hang-mismatch 4 mismatch
mismatch_fd=$job_fd
launch hang-deadlock 2 deadlock
deadlock_fd=$job_fd
watchers=()
# watch_from FD WHAT JOB CHECK: once the job says WHAT, watches it in the
# background until an answer passes CHECK (watch_until), then writes how
# many ms that took to $work/JOB.took.
watch_from() {
  until_said "$1" "$2"
  local since
  since=$(now_ms)
  (watch_until "$3" "$4" && echo $(($(now_ms) - since)) >"$work/$3.took") &
  watchers+=("$!")
}
stalled="h['state'] == 'stalled' and h['stalls']"
watch_from "$stuck_fd" "rank 2 hanging" hang-stuck \
  "$stalled and any(r['stack'] for r in h['ranks'] if r['rank'] == 2)"
watch_from "$mismatch_fd" "rank 2 hanging" hang-mismatch "$stalled"
watch_from "$deadlock_fd" "rank 0 hanging" hang-deadlock "$stalled"
for watcher in "${watchers[@]}"; do wait "$watcher" || fail "a watch failed: see above"; done

# expect JOB PYTHON: JOB's stalled answer passes the assertions PYTHON
# (over `h`); prints how soon after its hang it came.
expect() {
  local job=$1 took
  took=$(cat "$work/$job.took")
  python3 - "$work/$job.health" "$2" <<'PY' || fail "$job: $(cat "$work/$job.health")"
import json, sys
h = json.load(open(sys.argv[1]))
exec(sys.argv[2])
PY
  echo "health_test: $job reported in $took ms"
}
expect hang-stuck '
assert h["stalled_for_ns"] >= 2e9, h
(s,) = h["stalls"]
assert (s["kind"], s["op"], s["seq"], s["waiting_ranks"], s["suspect_ranks"]) == \
    ("missing", "MPI_Allreduce", 9, [0, 1, 3], [2]), s
ranks = {r["rank"]: r for r in s["ranks"]}
assert sorted(ranks) == [0, 1, 2, 3], ranks
assert (ranks[2]["in"], ranks[2]["category"]) == ("", ""), ranks[2]
assert ranks[2]["in_for_ns"] >= 2e9, ranks[2]
# Its stack, read through ptrace, reaches the line it is stuck on.
assert any("StuckInOwnCode() (" in f and f.endswith("tests/hang_job.cc:28)")
           for f in ranks[2]["stack"]), ranks[2]
for r in (0, 1, 3):
    assert (ranks[r]["in"], ranks[r]["category"], ranks[r]["seq"], ranks[r]["bytes"]) == \
        ("MPI_Allreduce", "mpi", 9, 8), ranks[r]
assert [r["rank"] for r in h["ranks"]] == [0, 1, 2, 3], h["ranks"]
'
expect hang-mismatch '
(s,) = h["stalls"]
assert (s["kind"], s["op"], s["seq"], s["waiting_ranks"], s["suspect_ranks"]) == \
    ("mismatch", "MPI_Allreduce", 9, [0, 1, 3], [2]), s
ranks = {r["rank"]: r for r in s["ranks"]}
assert (ranks[2]["in"], ranks[2]["seq"], ranks[2]["peer"]) == ("MPI_Bcast", 9, 0), ranks[2]
'
expect hang-deadlock '
(s,) = h["stalls"]
assert (s["kind"], s["op"], s["waiting_ranks"], s["suspect_ranks"]) == \
    ("p2p", "MPI_Send", [0, 1], [0, 1]), s
ranks = {r["rank"]: r for r in s["ranks"]}
assert (ranks[0]["peer"], ranks[0]["tag"], ranks[0]["bytes"]) == (1, 7, 16 << 20), ranks[0]
assert (ranks[1]["peer"], ranks[1]["tag"], ranks[1]["bytes"]) == (0, 7, 16 << 20), ranks[1]
assert (ranks[0]["in"], ranks[0]["waits_for"]) == ("MPI_Send", ""), ranks[0]
assert (ranks[1]["in"], ranks[1]["waits_for"]) == ("MPI_Wait", "MPI_Isend"), ranks[1]
'

# The collector's own watch: each stalled job ran --on-stall once, with
# its answer, and is in meridian_job_stalled_seconds.
hooked=()
for _ in 1 2 3; do read -r job <&"$hooks_fd"; hooked+=("$job"); done
[ "$(printf '%s\n' "${hooked[@]}" | sort | tr '\n' ' ')" = "hang-deadlock hang-mismatch hang-stuck " ] ||
  fail "--on-stall ran for: ${hooked[*]}"
python3 - "$work" <<'PY' || fail "--on-stall's answers"
import json, sys
for job, kind in (("hang-stuck", "missing"), ("hang-mismatch", "mismatch"), ("hang-deadlock", "p2p")):
    h = json.load(open("%s/hook.%s.json" % (sys.argv[1], job)))
    assert (h["job"], h["state"], [s["kind"] for s in h["stalls"]]) == (job, "stalled", [kind]), h
PY
metrics_port=$(sed -nE 's|.*metrics on http://[^:]+:([0-9]+)/metrics.*|\1|p' "$work/collector.log")
python3 - "$metrics_port" <<'PY' || fail "meridian_job_stalled_seconds"
import re, sys, urllib.request
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1]).read().decode()
stalled = dict(re.findall(r'^meridian_job_stalled_seconds\{job="([^"]+)"\} (\S+)$', text, re.M))
assert sorted(stalled) == ["hang-deadlock", "hang-mismatch", "hang-stuck"], stalled
assert all(float(v) >= 2 for v in stalled.values()), stalled
PY
# `meridian jobs` marks them stalled, with the collector's --stall-after.
"${meridian[@]}" jobs --json >"$work/jobs.json" || fail "meridian jobs"
python3 - "$work/jobs.json" <<'PY' || fail "meridian jobs: $(cat "$work/jobs.json")"
import json, sys
health = {j["job"]: j["health"] for j in json.load(open(sys.argv[1]))["jobs"]}
assert health == {"hang-stuck": "stalled", "hang-mismatch": "stalled",
                  "hang-deadlock": "stalled"}, health
PY
"${meridian[@]}" jobs | grep -q "^hang-stuck .*  stalled (meridian health --job hang-stuck)$" ||
  fail "meridian jobs' text: $("${meridian[@]}" jobs)"
echo "health_test: --on-stall ran once for each stalled job; meridian_job_stalled_seconds and meridian jobs name them"

# 4. While they hang: a job computing in a phase (until the test makes
# its file, after these checks) is running, not stalled, then finished; it
# is stored like any other.
launch compute 2 compute "$work/compute.done"
until_said "$job_fd" "rank 0 computing"
watch_until compute '[r["in"] for r in h["ranks"]] == ["solve", "solve"] and min(r["in_for_ns"] for r in h["ranks"]) >= 3e9'
python3 - "$work/compute.health" <<'PY' || fail "compute: $(cat "$work/compute.health")"
import json, sys
h = json.load(open(sys.argv[1]))
assert (h["state"], h["stalls"], h["stalled_for_ns"]) == ("running", [], 0), h
PY
"${meridian[@]}" jobs --json | grep -q '{"job":"compute",.*"health":"running"}' ||
  fail "compute's health in meridian jobs: $("${meridian[@]}" jobs --json)"
touch "$work/compute.done"
"${meridian[@]}" health --job compute --watch --json >"$work/compute.watch.all" ||
  fail "health --watch of compute"
# Asked with no --stall-after: the collector's (2 s).
[ "$(tail -n 1 "$work/compute.watch.all")" = \
  '{"job":"compute","state":"finished","stalled_for_ns":0,"stall_after_ns":2000000000,"stalls":[],"ranks":[],"slowdowns":[]}' ] ||
  fail "compute did not end finished: $(tail -n 1 "$work/compute.watch.all")"
"${meridian[@]}" stats --job compute --json >"$work/compute.stats" || fail "stats of compute"
grep -q '"name":"MPI_Allreduce","category":"mpi","calls":4,' "$work/compute.stats" ||
  fail "compute's spans: $(cat "$work/compute.stats")"
echo "health_test: a job computing longer than the threshold ran, finished and was stored"

# The hung jobs killed: what they recorded is stored, and they finish.
for group in "${groups[@]}"; do kill -KILL -- "-$group" 2>/dev/null || true; done
for job in hang-stuck hang-mismatch hang-deadlock; do
  watch_until "$job" 'h["state"] == "finished"'
done
"${meridian[@]}" stats --job hang-stuck --json >"$work/stuck.stats" || fail "stats of hang-stuck"
grep -q '"name":"MPI_Allreduce","category":"mpi","calls":36,' "$work/stuck.stats" ||
  fail "hang-stuck's stored spans: $(cat "$work/stuck.stats")"

# 5. A job that gets slower: 400 steps of 10 ms computing and a 64 KiB
# MPI_Allreduce; rank 1 computes 1.6 times as long from step 200. While it
# runs, `meridian health` names rank 1, compute, from step 200 (+-3), 1.6
# times (+-20 %), and no other rank (the others' waits grew: not theirs).
prog=$slow_bin launch slow 4 400 1 200 1.6 10
until_said "$job_fd" "step 200"
since=$(now_ms)
watch_until slow 'h["state"] == "running" and h["slowdowns"]'
took=$(($(now_ms) - since))
python3 - "$work/slow.health" <<'PY' || fail "slow: $(cat "$work/slow.health")"
import json, sys
h = json.load(open(sys.argv[1]))
(s,) = h["slowdowns"]
assert (s["rank"], s["metric"]) == (1, "compute"), s
assert 197 <= s["from_step"] <= 203, s
assert 1.28 <= s["ratio"] <= 1.92, s
assert 9.5e6 <= s["baseline_ns"] <= 11e6 and 15e6 <= s["now_ns"] <= 17.5e6, s
PY
python3 - "$metrics_port" <<'PY' || fail "meridian_job_slow_ranks"
import re, sys, urllib.request
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1]).read().decode()
slow = dict(re.findall(r'^meridian_job_slow_ranks\{job="([^"]+)"\} (\S+)$', text, re.M))
assert slow == {"slow": "1"}, slow
PY
# The collector's --on-slowdown ran for it, with the slowdown.
read -r hooked <&"$hooks_fd"
[ "$hooked" = "slow slow" ] || fail "--on-slowdown said: $hooked"
grep -q '"slowdowns":\[{"rank":1,"node":"[^"]*","metric":"compute",' "$work/slow-hook.slow.json" ||
  fail "--on-slowdown's answer: $(cat "$work/slow-hook.slow.json")"
until_said "$job_fd" done
echo "health_test: rank 1's compute slowdown reported $took ms after its step 200, while the job ran"
# steady JOB ARGS...: the slow_job JOB with ARGS raises no slowdown in any
# answer while it runs, nor after, and no --on-slowdown.
steady() {
  local job=$1
  shift
  prog=$slow_bin launch "$job" 4 "$@"
  "${meridian[@]}" health --job "$job" --watch --json >"$work/$job.answers" &
  local watch=$!
  until_said "$job_fd" done
  kill "$watch" 2>/dev/null || true
  wait "$watch" 2>/dev/null || true
  "${meridian[@]}" health --job "$job" --json >>"$work/$job.answers" || fail "health of $job"
  python3 - "$work/$job.answers" <<'PY' || fail "$job: $(cat "$work/$job.answers")"
import json, sys
answers = [json.loads(line) for line in open(sys.argv[1])]
assert len(answers) >= 4, answers
assert all(a["slowdowns"] == [] for a in answers), answers
PY
  [ ! -e "$work/slow-hook.$job.json" ] || fail "--on-slowdown ran for $job"
  echo "health_test: $job: no slowdown in $(wc -l <"$work/$job.answers") answers"
}
# The same loop unchanged.
steady steady 400 -1 200 1 10
# 6. A slower link: pairs (0, 1) and (2, 3) exchange 1 MiB a step; from
# step 200 the pair (0, 1) does it in 256 pieces (the same bytes at a lower
# rate). Reported as the link 0 - 1, not as either rank; and the same loop
# unchanged reports nothing.
prog=$slow_bin launch link 4 400 0 200 256 10 link
until_said "$job_fd" "step 200"
since=$(now_ms)
watch_until link 'h["state"] == "running" and h["slowdowns"]'
took=$(($(now_ms) - since))
python3 - "$work/link.health" <<'PY' || fail "link: $(cat "$work/link.health")"
import json, sys
h = json.load(open(sys.argv[1]))
(s,) = h["slowdowns"]
assert (s["rank"], s["peer"], s["metric"]) == (0, 1, "link"), s
# Placed at 200 in most runs here; the CUSUM merges a slow spell of the
# baseline on these shared 2 cores into the change now and then (157 in 1
# of 6 runs): never after the change, never long before it.
assert 150 <= s["from_step"] <= 203, s
assert s["ratio"] >= 1.2, s
print("health_test: link from step %d, %.2fx (%.3f ms a MiB, was %.3f)" %
      (s["from_step"], s["ratio"], s["now_ns"] / 1e6, s["baseline_ns"] / 1e6))
PY
until_said "$job_fd" done
"${meridian[@]}" health --job link --json >"$work/link.after" || fail "health of link"
python3 - "$work/link.after" <<'PY' || fail "link after: $(cat "$work/link.after")"
import json, sys
h = json.load(open(sys.argv[1]))
assert [(s["rank"], s.get("peer"), s["metric"]) for s in h["slowdowns"]] == [(0, 1, "link")], h
PY
echo "health_test: the slower link 0 - 1 reported $took ms after its step 200, as a link"
# The same exchange unchanged.
steady link-steady 400 -1 200 64 10 link

# The node's counters beside its spans: the agent sampled them every second
# (--node-counters-ms 1000) into the job's lowest rank on the node, as
# counter tracks of its "node counters" queue.
"${meridian[@]}" export --job steady -o "$work/steady.json" || fail "export of steady"
python3 - "$work/steady.json" <<'PY' || fail "steady's node counters"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
samples = {}
for e in events:
    if e.get("ph") == "C" and e["name"].startswith(("cpu.", "mem.", "net.")):
        samples.setdefault(e["name"], []).append(e)
busy = samples.get("cpu.busy_percent", [])
assert len(busy) >= 2, sorted(samples)
assert all(0 <= e["args"]["cpu.busy_percent"] <= 100 for e in busy), busy
assert len({e["pid"] for es in samples.values() for e in es}) == 1, samples
assert all(e["args"]["mem.used_bytes"] > 0 for e in samples["mem.used_bytes"]), samples
print("health_test: node counters of steady:", ", ".join(
    "%s x%d" % (name, len(es)) for name, es in sorted(samples.items())))
PY

# Failure paths: a clear error, and the collector still answers.
if "${meridian[@]}" health --job no-such-job >"$work/none.out" 2>&1; then
  fail "health of a job that does not exist succeeded"
fi
grep -q "no-such-job" "$work/none.out" || fail "health of no job said: $(cat "$work/none.out")"
# --watch waits 10 s for a job not known yet, then says the same.
if "${meridian[@]}" health --job no-such-job --watch >"$work/none.watch" 2>&1; then
  fail "health --watch of a job that does not exist succeeded"
fi
[ "$(cat "$work/none.watch")" = "$(cat "$work/none.out")" ] ||
  fail "health --watch of no job said: $(cat "$work/none.watch")"
if "${meridian[@]}" health --job compute --stall-after 0 >"$work/zero.out" 2>&1; then
  fail "--stall-after 0 was taken"
fi
grep -q -- "--stall-after must be seconds" "$work/zero.out" || fail "--stall-after 0 said: $(cat "$work/zero.out")"
"${meridian[@]}" jobs >/dev/null || fail "the collector stopped answering"
echo "health_test: passed"
