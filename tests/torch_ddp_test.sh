#!/usr/bin/env bash
# torch.distributed captured from real PyTorch (Debian's python3-torch 1.13,
# gloo): the extension built as deploy/install.sh builds it
# (capture/torch/build_extension.py, torch's cpp_extension), then 2-rank
# DistributedDataParallel jobs (tests/torch_ddp_job.py) started the way
# torchrun starts workers, each under `meridian run`, through a real agent
# and collector. Checked in what the query commands give back:
#   1. Per rank, 39 allreduce spans whose bytes sum to exactly
#      20 x 1,597,480 (one bucket in step 0, two after DDP rebuilt them);
#      every step from 1 has communication; step 5's dependency graph joins
#      the ranks' 2 allreduces; stats
#      count them exactly; an unchanged replay gives back every step as
#      measured; Perfetto and Kineto exports carry them (Kineto with its
#      process-group args); the stragglers report matches
#      at least 39 collective instances across the ranks; no operation
#      was recorded without its work's completion.
#   2. meridian imported and its capture started before torch is imported:
#      the same; then an all_to_all_single (not a dispatcher op) and groups
#      made and destroyed: each its own id and seq.
#   3. Rank 1 made 40 ms late in every step: it is the rank most waited on.
#   4. An extension that cannot load: one warning, the job and its steps
#      recorded as before, no collective.
#   5. MERIDIAN_TORCH_OPS=1: aten operators and autograd nodes as phases;
#      a value out of range: a warning, and none.
#   6. send/recv and isend/irecv: every message matched, and the
#      communication matrix exact.
#   7. Of 3 ranks, rank 1 stops in its own code where rank 0 calls
#      dist.all_reduce and rank 2 waits on its async_op=True work:
#      `meridian health` says stalled, ranks 0 and 2 waiting in the
#      allreduce, rank 1 the suspect, its Python stack at the line it
#      waits on.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
agent_bin="$runfiles/agent/meridian-agent"
meridian_bin="$runfiles/cli/meridian"
job_py="$runfiles/tests/torch_ddp_job.py"
python=/usr/bin/python3
work=$(mktemp -d /tmp/meridian-torch-XXXXXX)
pids=()
hung=()  # process groups of 7.'s hung workers
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for group in "${hung[@]}"; do kill -KILL -- "-$group" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$python" -c 'import torch' 2>/dev/null ||
  fail "$python cannot import torch (Debian: python3-torch; deploy/dependencies.sh installs it)"

extension=$("$python" "$runfiles/capture/torch/build_extension.py" "$work/ext" 2>"$work/build.log") ||
  { cat "$work/build.log" >&2; fail "build_extension.py"; }
[ -f "$extension" ] || fail "build_extension.py printed $extension"
# Meridian's own sources build without a warning (torch's headers aside).
if grep -E '(capture/torch|capture/probe)/[a-z_]+\.(cc|h):[0-9]+:[0-9]+: (warning|error)' "$work/build.log"; then
  fail "the extension's sources warn"
fi
export MERIDIAN_TORCH_EXTENSION="$extension"

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
start agent "$agent_bin" --collector "$addr" --socket "$work/agent.sock" --spool "$work/spool" \
  --stack-after-ms 1000
export MERIDIAN_AGENT_SOCKET="$work/agent.sock"
export PYTHONPATH="$runfiles/capture/probe/python"
unset LD_PRELOAD MERIDIAN_PROBE_LIB

# ddp JOB [ARGS...]: the job's two workers, as torchrun starts them.
ddp() {
  local job=$1
  shift
  local port
  port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local workers=()
  for rank in 0 1; do
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$rank LOCAL_RANK=$rank \
      WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 TORCHELASTIC_RUN_ID=$job \
      "$meridian_bin" --collector "$addr" run -- "$python" -B "$job_py" "$@" \
      >"$work/$job.$rank.out" 2>"$work/$job.$rank.err" &
    workers+=("$!")
  done
  for rank in 0 1; do
    wait "${workers[$rank]}" ||
      { cat "$work/$job.$rank.out" "$work/$job.$rank.err" >&2; fail "$job rank $rank"; }
  done
}

query() {  # query JOB COMMAND: COMMAND's --json answer in $work/JOB.COMMAND
  "$meridian_bin" --collector "$addr" "$2" --job "torchrun-$1" --json \
    >"$work/$1.$2" || fail "meridian $2 of $1"
}

# expect_ddp JOB: what every traced DDP job of 20 steps shows (1 above).
expect_ddp() {
  local job=$1
  "$meridian_bin" --collector "$addr" export --job "torchrun-$job" \
    -o "$work/$job.json" >/dev/null || fail "export of $job"
  query "$job" steps
  query "$job" stragglers
  query "$job" stats
  query "$job" replay
  "$meridian_bin" --collector "$addr" export --job "torchrun-$job" --format perfetto \
    -o "$work/$job.pftrace" >/dev/null || fail "perfetto export of $job"
  "$meridian_bin" --collector "$addr" export --job "torchrun-$job" --format kineto \
    --ranks 1 -o "$work/$job.kineto.json" >/dev/null || fail "kineto export of $job"
  # Step 5's dependency graph joins the ranks' allreduces in instances.
  "$meridian_bin" --collector "$addr" graph --job "torchrun-$job" --step 5 \
    -o "$work/$job.dot" >/dev/null || fail "graph of $job"
  [ "$(grep -c 'label="collective\\nallreduce comm [0-9]* seq [0-9]*' "$work/$job.dot")" -eq 2 ] ||
    { cat "$work/$job.dot" >&2; fail "$job: step 5's graph has not its 2 allreduce instances"; }
  "$python" - "$work" "$job" <<'PY' || fail "$job: see above"
import json, sys
work, job = sys.argv[1], sys.argv[2]
events = json.load(open("%s/%s.json" % (work, job)))["traceEvents"]
ranks = {e["pid"]: int(e["args"]["name"].split()[1]) for e in events
         if e["ph"] == "M" and e["name"] == "process_name"}
allreduce = {0: [], 1: []}
for e in events:
    if e.get("cat") == "c10d" and e["name"] == "allreduce" and e["args"]["group"] == 0:
        allreduce[ranks[e["pid"]]].append(e["args"]["bytes"])
        args = e["args"]
        assert (args["backend"], args["group"], args["ranks"], args["work"], args["comm_size"]) == \
            ("gloo", 0, "[0, 1]", "gloo:all_reduce", 2), e
for rank, sizes in allreduce.items():
    assert len(sizes) == 39, (rank, len(sizes))
    assert sum(sizes) == 20 * 1597480, (rank, sum(sizes))
    assert sizes.count(1597480) == 1 and sizes.count(1071144) == 19, (rank, sorted(set(sizes)))
steps = json.load(open("%s/%s.steps" % (work, job)))["steps"]
assert [s["step"] for s in steps] == list(range(20)), [s["step"] for s in steps]
for s in steps[1:]:
    for r in s["ranks"]:
        assert r["communication_ns"] > 0, s
stragglers = json.load(open("%s/%s.stragglers" % (work, job)))
assert stragglers["instances"] >= 39, stragglers["instances"]
ops = {(o["category"], o["name"]): o for o in
       json.load(open("%s/%s.stats" % (work, job)))["ops"]}
every = [e["args"]["bytes"] for e in events
         if e.get("cat") == "c10d" and e["name"] == "allreduce"]  # all groups'
assert (ops[("c10d", "allreduce")]["calls"], ops[("c10d", "allreduce")]["bytes"]) == \
    (len(every), sum(every)), ops[("c10d", "allreduce")]
assert len(every) >= 2 * 39
# An unchanged replay gives back what was measured, every dependency found
# (the critical path does not cross DDP's waits: docs/torch.md, "Not yet").
replay = json.load(open("%s/%s.replay" % (work, job)))
assert replay["broken_dependencies"] == 0, replay
assert replay["predicted_ns"] == replay["measured_ns"] > 0, replay
# (step 20: the job's tail after its last optimizer step, its barrier)
assert [s["step"] for s in replay["steps"]] == list(range(21)), replay["steps"]
perfetto = open("%s/%s.pftrace" % (work, job), "rb").read()
assert b"allreduce" in perfetto and b"c10d group 0" in perfetto
kineto = json.load(open("%s/%s.kineto.json" % (work, job)))
first = next(e for e in kineto["traceEvents"] if e.get("name") == "allreduce")
assert (first["cat"], first["args"]["Process Group Name"], first["args"]["Process Group Ranks"],
        first["args"]["Group size"]) == ("cpu_op", "0", "[0, 1]", 2), first
for rank in (0, 1):
    line = open("%s/%s.%d.out" % (work, job, rank)).read().splitlines()[-1]
    capture = json.loads(line)["capture"]
    assert capture["enqueue_only"] == 0 and capture["unregistered"] == 0, capture
    assert capture["untracked"] == 0, capture
    assert capture["recorded"] >= 44, capture
PY
}

# 1. torch first, then meridian (the job's import order).
ddp ddp-a
expect_ddp ddp-a
echo "torch_ddp_test: DDP job recorded whole"

# 2. meridian first: its import hook starts the capture with torch; and
# groups made after the steps.
ddp ddp-b --meridian-first --groups
expect_ddp ddp-b
"$python" - "$work/ddp-b.json" <<'PY' || fail "ddp-b: the groups made after the steps"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
ranks = {e["pid"]: int(e["args"]["name"].split()[1]) for e in events
         if e["ph"] == "M" and e["name"] == "process_name"}
late = sorted((ranks[e["pid"]], e["name"], e["args"]["group"], e["args"]["seq"],
               e["args"]["bytes"], e["args"].get("peer"))
              for e in events if e.get("cat") == "c10d" and e["args"].get("group") in (1, 2))
assert late == [(0, "allreduce", 1, 0, 40, None), (0, "broadcast", 2, 0, 80, 1),
                (1, "allreduce", 1, 0, 40, None), (1, "broadcast", 2, 0, 80, 1)], late
comms = {e["args"]["group"]: e["args"]["comm"] for e in events if e.get("cat") == "c10d"}
assert len(set(comms.values())) == 3, comms
# all_to_all_single: torch calls the group without the dispatcher; the
# wrapper of its Python function begins it, its work ends it.
alltoall = sorted((ranks[e["pid"]], e["args"]["group"], e["args"]["bytes"],
                   e["args"]["seq"], "work" in e["args"])
                  for e in events if e.get("cat") == "c10d" and e["name"] == "alltoall")
assert len(alltoall) == 2 and alltoall[0][1:] == alltoall[1][1:], alltoall
assert alltoall[0][1:3] == (0, 32) and alltoall[0][4], alltoall
PY
echo "torch_ddp_test: meridian imported before torch; groups made and destroyed"

# 3. A straggler: rank 1 computes 40 ms longer in every step.
ddp ddp-late --late-rank 1 --late-ms 40
query ddp-late stragglers
"$python" - "$work/ddp-late.stragglers" <<'PY' || fail "ddp-late: rank 1 is not the top straggler"
import json, sys
report = json.load(open(sys.argv[1]))
top = max(report["ranks"], key=lambda r: r["wait_ns"])
assert top["rank"] == 1, report["ranks"]
# The others waited about 40 ms in each of 20 steps for it.
assert top["wait_ns"] > 20 * 30e6, top
PY
echo "torch_ddp_test: the late rank is the top straggler"

# 4. An extension that does not load: a warning, the steps, no collective;
# under -W error too (the warning raises: it is written to stderr instead).
MERIDIAN_TORCH_EXTENSION="$work/none.so" PYTHONWARNINGS=error::RuntimeWarning ddp ddp-none --steps 3
grep -q "meridian: torch.distributed operations are not recorded: its extension $work/none.so does not load" \
  "$work/ddp-none.0.err" || { cat "$work/ddp-none.0.err" >&2; fail "no warning"; }
query ddp-none steps
"$meridian_bin" --collector "$addr" export --job torchrun-ddp-none -o "$work/none.json" >/dev/null
"$python" - "$work/ddp-none.steps" "$work/none.json" <<'PY' || fail "ddp-none"
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
assert [s["step"] for s in steps] == [0, 1, 2], steps
events = json.load(open(sys.argv[2]))["traceEvents"]
assert not [e for e in events if e.get("cat") == "c10d"]
PY
echo "torch_ddp_test: without its extension, one warning and the rest recorded"

# 5. Operators as phases, and a bad MERIDIAN_TORCH_OPS.
MERIDIAN_TORCH_OPS=1 ddp ddp-ops --steps 3
MERIDIAN_TORCH_OPS=2 ddp ddp-badops --steps 3
grep -q "meridian: MERIDIAN_TORCH_OPS=2 is not a number from 0 to 1: operators are not recorded" \
  "$work/ddp-badops.0.err" || { cat "$work/ddp-badops.0.err" >&2; fail "no warning for MERIDIAN_TORCH_OPS=2"; }
for job in ddp-ops ddp-badops; do
  "$meridian_bin" --collector "$addr" export --job "torchrun-$job" -o "$work/$job.json" >/dev/null
done
"$python" - "$work/ddp-ops.json" "$work/ddp-badops.json" <<'PY' || fail "operators as phases"
import collections, json, sys
def phases(path):
    events = json.load(open(path))["traceEvents"]
    return collections.Counter(
        (e["name"], e["args"].get("step")) for e in events
        if e["ph"] == "X" and e.get("cat") == "user")
ops, bad = phases(sys.argv[1]), phases(sys.argv[2])
# Each rank's 3 layers' addmm in every step's forward, and their backward.
for step in (0, 1, 2):
    assert ops[("aten::addmm", step)] >= 2 * 3, ops
    assert ops[("autograd::engine::evaluate_function: AddmmBackward0", step)] == 2 * 3, ops
assert not [k for k in bad if k[0].startswith("aten::")], bad
# The c10d ops are spans of their own, never phases.
assert not [k for k in ops if k[0].startswith("c10d::")], ops
PY
echo "torch_ddp_test: MERIDIAN_TORCH_OPS"

# 6. Point-to-point: 11 messages, each matched; the matrix exact.
ddp ddp-p2p --steps 2 --p2p
query ddp-p2p stragglers
"$meridian_bin" --collector "$addr" stats --job torchrun-ddp-p2p --matrix --json \
  >"$work/ddp-p2p.matrix" || fail "matrix of ddp-p2p"
"$python" - "$work/ddp-p2p.stragglers" "$work/ddp-p2p.matrix" <<'PY' || fail "ddp-p2p"
import json, sys
assert json.load(open(sys.argv[1]))["messages"] == 11
matrix = json.load(open(sys.argv[2]))["matrix"]
assert matrix == [{"from": 0, "to": 1, "messages": 6, "bytes": 24000},
                  {"from": 1, "to": 0, "messages": 5, "bytes": 20000}], matrix
PY
echo "torch_ddp_test: point-to-point matched"

# 7. A hung job of 3 ranks: rank 1 stops in its own code where rank 0 calls
# dist.all_reduce and rank 2 dist.all_reduce(async_op=True).wait().
# `meridian health` says stalled: ranks 0 and 2 wait in the allreduce (c10d,
# kept in flight through rank 0's call and again through rank 2's
# Work.wait), rank 1 is the suspect.
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for rank in 0 1 2; do
  mkfifo "$work/hang.$rank.fifo"
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$rank LOCAL_RANK=$rank \
    WORLD_SIZE=3 LOCAL_WORLD_SIZE=3 TORCHELASTIC_RUN_ID=ddp-hang \
    setsid "$meridian_bin" --collector "$addr" run -- "$python" -B "$job_py" \
    --steps 2 --hang-rank 1 --async-rank 2 >"$work/hang.$rank.fifo" \
    2>"$work/hang.$rank.err" &
  hung+=("$!")
done
# Every FIFO open first: each worker starts once its output has a reader.
exec {hang0}<"$work/hang.0.fifo" {hang1}<"$work/hang.1.fifo" {hang2}<"$work/hang.2.fifo"
for fd in "$hang0" "$hang1" "$hang2"; do
  while :; do
    read -r said <&"$fd" || fail "a rank ended before hanging: $(cat "$work"/hang.*.err)"
    [ "$said" = hanging ] && break
  done
done
mkfifo "$work/hang.watch"
"$meridian_bin" --collector "$addr" health --job torchrun-ddp-hang --stall-after 2 \
  --watch --json >"$work/hang.watch" &
watcher=$!
exec {watch_fd}<"$work/hang.watch"
stalled=""
for _ in $(seq 30); do
  read -r answer <&"$watch_fd" || break
  # Stalled, and rank 1's stacks read (1 s after it stopped).
  if "$python" -c '
import json, sys
h = json.loads(sys.argv[1])
sys.exit(0 if h["state"] == "stalled" and h["stalls"] and any(
    r["python_stack"] for r in h["ranks"] if r["rank"] == 1) else 1)' "$answer"; then
    stalled=$answer
    break
  fi
done
kill "$watcher" 2>/dev/null || true
[ -n "$stalled" ] || fail "ddp-hang never reported stalled; the last answer: ${answer:-none}"
"$python" - "$stalled" "$job_py" <<'PY' || fail "ddp-hang: $stalled"
import json, sys
h = json.loads(sys.argv[1])
(s,) = h["stalls"]
assert (s["kind"], s["op"], s["waiting_ranks"], s["suspect_ranks"]) == \
    ("missing", "allreduce", [0, 2], [1]), s
ranks = {r["rank"]: r for r in s["ranks"]}
for r in (0, 2):
    assert (ranks[r]["in"], ranks[r]["category"], ranks[r]["bytes"]) == \
        ("allreduce", "c10d", 4000), ranks[r]
    assert ranks[r]["in_for_ns"] >= 2e9, ranks[r]
assert ranks[0]["seq"] == ranks[2]["seq"], ranks
assert ranks[1]["in"] != "allreduce", ranks[1]
# Rank 1's Python stack: in threading's wait, called on the job's line.
(line,) = [n for n, text in enumerate(open(sys.argv[2]), 1)
           if text.strip() == "threading.Event().wait()"]
stack = ranks[1]["python_stack"]
assert stack[0].startswith("wait (") and "threading.py:" in stack[0], stack
assert "stuck_in_own_code (%s:%d)" % (sys.argv[2], line) in stack, stack
PY
for group in "${hung[@]}"; do kill -KILL -- "-$group" 2>/dev/null || true; done
echo "torch_ddp_test: a hung job's waiting rank and suspect named"
