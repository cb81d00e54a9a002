#!/usr/bin/env bash
# `meridian import` as a user runs it: a real collector, real files; exact
# spans, the round trip through `meridian export`, exactly once, combining
# files of two nodes with a known clock offset, and bad files refused with
# their reason while the collector and what it stored stay.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
meridian_bin="$runfiles/cli/meridian"
synth_bin="$runfiles/testing/meridian-synth"
data="$runfiles/tests/testdata/import"
samples="$runfiles/import/testdata"  # one small file of every format
work="${TEST_TMPDIR}/import"
rm -rf "$work" && mkdir -p "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_line() {  # expect_line FILE LINE
  grep -qxF -- "$2" "$1" || { cat "$1" >&2; fail "no line \"$2\" in $1"; }
}

coproc COLLECTOR { exec "$collector_bin" --listen 127.0.0.1:0 --db "$work/m.db" 2>"$work/collector.log"; }
pid=$COLLECTOR_PID
trap 'kill -9 $pid 2>/dev/null || true' EXIT
read -r line <&"${COLLECTOR[0]}" || fail "collector did not start"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
m() { "$meridian_bin" --collector "$addr" "$@"; }

# 1. Round trip: a job exported, imported as another job and exported
#    again gives the same events (names, categories, ranks, threads, exact
#    times, args).
"$synth_bin" --collector "$addr" --job orig --ranks 2 --nodes 2 --steps 3 >/dev/null
m export --job orig -o "$work/orig.json" >/dev/null
m import --job rt "$work/orig.json" 2>"$work/rt.err" || { cat "$work/rt.err"; fail "import"; }
expect_line "$work/rt.err" \
  "meridian import: $work/orig.json: 38 spans of ranks 0,1 (node node-0, meridian) into job rt in $(sed -nE 's/.* in ([0-9.]+ s) .*/\1/p' "$work/rt.err") ($(sed -nE 's/.*\(([0-9]+ spans\/s)\)$/\1/p' "$work/rt.err"))"
m export --job rt -o "$work/rt.json" >/dev/null
python3 - "$work/orig.json" "$work/rt.json" <<'PY'
import json, sys
def events(path):
    t = json.load(open(path))["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in t
               if e["ph"] == "M" and e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in t
             if e["ph"] == "M" and e["name"] == "process_name"}
    return sorted((e["ph"], e["name"], e["cat"], procs[e["pid"]],
                   threads[(e["pid"], e["tid"])], e["ts"], e.get("dur"),
                   json.dumps(e["args"], sort_keys=True))
                  for e in t if e["ph"] in ("X", "i", "C"))
a, b = events(sys.argv[1]), events(sys.argv[2])
assert len(a) == 38, len(a)
assert a == b, [x for x in zip(a, b) if x[0] != x[1]][:3]
PY

# 2. Exactly once: the same file again stores nothing.
m import --job rt "$work/orig.json" 2>"$work/again.err"
expect_line "$work/again.err" \
  "meridian import: $work/orig.json: already imported into job rt (38 spans stored before; nothing stored twice)"
m jobs >"$work/jobs.txt"
grep -qE '^rt +2 +2 +38 ' "$work/jobs.txt" || { cat "$work/jobs.txt"; fail "rt holds other than 38 spans"; }

# 3. A PyTorch profiler trace, gzipped: rank from distributedInfo, kernels,
#    copies and NCCL as a collective with its bytes.
gzip -c "$data/kineto_rank5.json" >"$work/rank5.pt.trace.json.gz"
m import --job k "$work/rank5.pt.trace.json.gz" 2>"$work/k.err" || { cat "$work/k.err"; fail "kineto"; }
grep -qF "7 spans of rank 5 (node rank5.pt.trace.json.gz, kineto) into job k" "$work/k.err" ||
  { cat "$work/k.err"; fail "kineto summary"; }
m export --job k -o "$work/k.json" >/dev/null
python3 - "$work/k.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
x = {e["name"]: e for e in t["traceEvents"] if e["ph"] == "X"}
assert t["otherData"]["epoch_ns"] == 1764000000000100000, t["otherData"]
assert x["allreduce"]["cat"] == "nccl" and x["allreduce"]["args"]["bytes"] == 4096, x["allreduce"]
assert x["sgemm_128x64"]["cat"] == "cuda_kernel" and x["sgemm_128x64"]["ts"] == 20.0, x["sgemm_128x64"]
assert x["sgemm_128x64"]["dur"] == 30.0
assert x["cudaStreamSynchronize"]["cat"] == "cuda_sync"
names = {e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "thread_name"}
assert {"GPU 0 stream 7", "GPU 0 stream 13", "thread 4321"} <= names, names
starts = {e["id"] for e in t["traceEvents"] if e["ph"] == "s"}
ends = {e["id"] for e in t["traceEvents"] if e["ph"] == "f"}
assert starts & ends == {"6:4d"}, (starts, ends)  # the launch -> sgemm (77)
PY

# 3b. A captured job takes an imported rank: job orig (ranks 0 and 1 from
#     their agents) gets rank 5 from the PyTorch profiler file; every query
#     sees three ranks, the captured spans unchanged.
m import --job orig "$work/rank5.pt.trace.json.gz" 2>/dev/null
m jobs >"$work/jobs-live.txt"
grep -qE '^orig +3 +3 +45 ' "$work/jobs-live.txt" || { cat "$work/jobs-live.txt"; fail "orig did not take rank 5"; }
m stats --job orig --json >"$work/orig-stats.json"
python3 - "$work/orig-stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert [r["rank"] for r in s["ranks"]] == [0, 1, 5], s["ranks"]
PY

# 4. Combining two nodes' files: rank 1's node runs 5 ms ahead; given the
#    offset, the merged timeline puts their common collective together.
python3 - "$work" <<'PY'
import json, sys
base = 1764000000000000000 // 1000  # us
for rank, skew in ((0, 0), (1, 5000)):
    events = [{"ph": "X", "name": "MPI_Allreduce", "cat": "mpi", "pid": 1,
               "tid": 1, "ts": base + 1000 + skew + 10 * rank, "dur": 50,
               "args": {"comm": "0x7", "comm_size": 2, "seq": 0, "bytes": 8}}]
    json.dump(events, open(f"{sys.argv[1]}/rank{rank}.json", "w"))
PY
m import --job c --rank 0 --node a "$work/rank0.json" 2>/dev/null
m import --job c --rank 1 --node b --clock-offset-ns 5000000 "$work/rank1.json" 2>/dev/null
m clocks --job c --json >"$work/clocks.json"
m export --job c -o "$work/c.json" >/dev/null
python3 - "$work/clocks.json" "$work/c.json" <<'PY'
import json, sys
clocks = json.load(open(sys.argv[1]))
nodes = {n["node"]: n for n in clocks["nodes"]}
assert nodes["b"]["offset_ns"] == 5000000, nodes
x = sorted((e["pid"], e["ts"]) for e in json.load(open(sys.argv[2]))["traceEvents"] if e["ph"] == "X")
assert len(x) == 2 and x[1][1] - x[0][1] == 10.0, x  # rank 1 started 10 us later
PY

# 4b. The same without offsets: node b's files run 5 ms ahead, and the
#     causal refinement recovers that from the matched collectives and
#     messages between the files (byteprofile's `combine`, with clocks),
#     within 10 us; `meridian clocks` reports it.
python3 - "$work" <<'PY'
import json, sys
base = 1764000000000000000 // 1000  # us, true time
SKEW = 5000                          # node b is 5 ms ahead
def ev(name, rank, t, dur, **args):
    skew = SKEW if rank == 1 else 0
    return {"ph": "X", "name": name, "cat": "mpi", "pid": 1, "tid": 1,
            "ts": base + t + skew, "dur": dur, "args": args}
files = {0: [], 1: []}
for k in range(5):
    t = 1000 * k
    # Allreduce: rank 1 enters 10 us after rank 0; both leave at t + 60.
    files[0].append(ev("MPI_Allreduce", 0, t, 60, comm="0x7", comm_size=2, seq=k, bytes=8))
    files[1].append(ev("MPI_Allreduce", 1, t + 10, 50, comm="0x7", comm_size=2, seq=k, bytes=8))
    # A message each way, received 3 us after the send started.
    files[0].append(ev("MPI_Send", 0, t + 100, 2, comm="0x7", peer=1, tag=k, bytes=64))
    files[1].append(ev("MPI_Recv", 1, t + 90, 13, comm="0x7", peer=0, tag=k, bytes=64))
    files[1].append(ev("MPI_Send", 1, t + 200, 2, comm="0x7", peer=0, tag=k, bytes=64))
    files[0].append(ev("MPI_Recv", 0, t + 190, 13, comm="0x7", peer=1, tag=k, bytes=64))
for rank, events in files.items():
    json.dump(events, open(f"{sys.argv[1]}/free{rank}.json", "w"))
PY
m import --job free --rank 0 --node a "$work/free0.json" 2>/dev/null
m import --job free --rank 1 --node b "$work/free1.json" 2>/dev/null
m clocks --job free --json >"$work/free-clocks.json"
m export --job free -o "$work/free.json" >/dev/null
python3 - "$work/free-clocks.json" "$work/free.json" <<'PY'
import json, sys
clocks = json.load(open(sys.argv[1]))
nodes = {n["node"]: n for n in clocks["nodes"]}
shift = nodes["b"]["correction_ns"] - nodes["a"]["correction_ns"]
print(f"combine without offsets: node b corrected by {shift} ns (true -5000000)")
assert abs(shift + 5000000) <= 10000, nodes   # b's clock moved back 5 ms
assert clocks["violations_after"] == 0, clocks
x = {}
for e in json.load(open(sys.argv[2]))["traceEvents"]:
    if e["ph"] == "X" and e["name"] == "MPI_Allreduce" and e["args"]["seq"] == 0:
        x[e["pid"]] = e["ts"]
assert abs((x[2] - x[1]) - 10.0) <= 10.0, x     # rank 1 entered 10 us later
PY

# 4c. The frameworks' timelines, mpitrace profiles and an Nsight Systems
#     export, told apart by content: their phases on per-tensor queue
#     tracks, their collectives as communication with bytes; mpitrace as
#     statistics only; Nsight's kernels, copies, runtime calls and NVTX.
m import --job fw "$samples/horovod_timeline.json" 2>"$work/h.err" || { cat "$work/h.err"; fail "horovod"; }
grep -qF "15 spans of rank 0 (node horovod_timeline.json, horovod) into job fw" "$work/h.err" || { cat "$work/h.err"; fail "horovod summary"; }
m import --job fw --rank 1 "$samples/byteps" 2>"$work/b.err" || { cat "$work/b.err"; fail "byteps"; }
grep -qF "8 spans of rank 1 (node $samples/byteps, byteps)" "$work/b.err" || { cat "$work/b.err"; fail "byteps summary"; }
m import --job fw --rank 5 --epoch-ns 1764000000000000000 "$samples/bluefog/tl1.json" 2>"$work/f.err" || { cat "$work/f.err"; fail "bluefog"; }
grep -qF "8 spans of rank 5 (node tl1.json, bluefog)" "$work/f.err" || { cat "$work/f.err"; fail "bluefog summary"; }
python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[2]); c.executescript(open(sys.argv[1]).read()); c.commit()" \
  "$samples/nsight_sample.sql" "$work/report.sqlite"
m import --job ns "$work/report.sqlite" 2>"$work/n.err" || { cat "$work/n.err"; fail "nsight"; }
grep -qF "16 spans of ranks 0,1 (node report.sqlite, nsight) into job ns" "$work/n.err" || { cat "$work/n.err"; fail "nsight summary"; }
m export --job fw -o "$work/fw.json" >/dev/null
m export --job ns -o "$work/ns.json" >/dev/null
python3 - "$work/fw.json" "$work/ns.json" <<'PY'
import json, sys
def spans(path):
    t = json.load(open(path))["traceEvents"]
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in t
              if e["ph"] == "M" and e["name"] == "thread_name"}
    return [(e["name"], e["cat"], tracks[(e["pid"], e["tid"])],
             e["args"].get("bytes")) for e in t if e["ph"] == "X"]
fw = spans(sys.argv[1])
assert ("ncclAllReduce", "nccl", "DistributedSGD_Allreduce/grad_0", 1048576) in fw, fw
assert ("MPI_Allgather", "mpi", "DistributedSGD_Allgather/embedding", 20) in fw, fw
assert ("QUEUE", "user", "DistributedSGD_Allreduce/grad_0", None) in fw, fw
assert ("PUSH", "mpi", "byteps.gradient_0 partition 1", None) in fw, fw
assert ("REDUCE", "nccl", "byteps.gradient_0 partition 0", None) in fw, fw
assert ("MPI_Allreduce", "mpi", "fc.bias (thread 2)", None) in fw, fw
assert ("COMPUTE_AVERAGE", "user", "fc.weight (thread 2)", None) in fw, fw
ns = spans(sys.argv[2])
assert ("void gemm<float>(float*, int)", "cuda_kernel", "GPU 0 stream 7", None) in ns, ns
assert ("Memcpy HtoD", "cuda_memcpy", "GPU 0 stream 7", 4194304) in ns, ns
assert ("cudaLaunchKernel", "cuda_runtime", "main", None) in ns, ns
assert ("forward", "nvtx", "dataloader", None) in ns, ns
assert len(ns) == 15, len(ns)
PY
m import --job mp "$samples/mpi_profile.1234.0" "$samples/mpi_profile.1234.3" 2>"$work/mp.err" || { cat "$work/mp.err"; fail "mpitrace"; }
expect_line "$work/mp.err" \
  "meridian import: $samples/mpi_profile.1234.0: statistics of 7 operations and 3 processes of ranks 0,1,2 (node nid00102, mpitrace) into job mp; meridian stats shows them"
# Rank 3's own file names no host: it is on the one rank 0's table gives.
expect_line "$work/mp.err" \
  "meridian import: $samples/mpi_profile.1234.3: statistics of 5 operations and 1 process of rank 3 (node nid00103, mpitrace) into job mp; meridian stats shows them"
m stats --job mp --json >"$work/mp.json"
m stats --job mp >"$work/mp.txt"
expect_line "$work/mp.txt" \
  "MPI_Allreduce                        2000         671096.6     8.873000"
expect_line "$work/mp.txt" \
  "     2  nid00103                      0     4.100000    12.380000            -     11.200      0.270    505.500       1190  mpitrace (imported)"
m jobs >"$work/mp-jobs.txt"
grep -qE '^mp +4 +2 +0 ' "$work/mp-jobs.txt" || { cat "$work/mp-jobs.txt"; fail "mp: not 4 ranks on 2 nodes"; }
python3 - "$work/mp.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ranks = {r["rank"]: r for r in s["ranks"]}
assert sorted(ranks) == [0, 1, 2, 3], ranks
assert all(r["source"] == "mpitrace" for r in ranks.values()), ranks
# Rank 3's own times (to the ms), not its row of rank 0's table (5.82,
# 12.40); mpitrace's elapsed time is MPI_Init to MPI_Finalize.
assert ranks[3]["comm_ns"] == 5823000000 and ranks[3]["mpi_elapsed_ns"] == 12401000000, ranks[3]
assert ranks[3]["elapsed_ns"] == 0 and ranks[3]["host"] == "nid00103", ranks[3]
# Resource use as mpitrace measured it: rank 3's own summary lines, its
# switches from rank 0's table.
assert (ranks[3]["user_ns"], ranks[3]["system_ns"], ranks[3]["max_rss_bytes"],
        ranks[3]["context_switches"]) == (11500000000, 300000000,
                                          498 * 1048576, 1305), ranks[3]
assert s["max_comm_rank"] == 3 and s["elapsed_ns"] == 0, s
allreduce = next(o for o in s["ops"] if o["name"] == "MPI_Allreduce")
assert allreduce["calls"] == 2000 and allreduce["dur_ns"] == 8873000000, allreduce
assert [b["log2"] for b in allreduce["buckets"]] == [3, 26], allreduce
PY

# 5. Bad input: refused with the file, event and field; nothing of it
#    stored; the collector serves on and what it stored is intact.
printf '[{"ph":"X","name":"a","ts":1764000000000000,"dur":1},\n {"ph":"X","name":"b","ts":"later","dur":1}]' >"$work/bad.json"
if m import --job bad "$work/bad.json" 2>"$work/bad.err"; then fail "bad.json imported"; fi
expect_line "$work/bad.err" \
  "meridian import: $work/bad.json: event 1 (\"b\"): field \"ts\": later is not a number of microseconds that fits"
head -c 300 "$work/rank5.pt.trace.json.gz" >"$work/cut.json.gz"
if m import --job bad "$work/cut.json.gz" 2>"$work/cut.err"; then fail "cut.json.gz imported"; fi
expect_line "$work/cut.err" \
  "meridian import: $work/cut.json.gz: the gzip data is cut short (a truncated .gz); nothing imported"
printf 'MPI_Send 12 0.5\n' >"$work/text.txt"
if m import --job bad "$work/text.txt" 2>"$work/text.err"; then fail "text imported"; fi
grep -qF "$work/text.txt: not a format meridian import reads" "$work/text.err" || fail "text: $(cat "$work/text.err")"
if m import --job bad --clock-offset-ns 5 "$work/orig.json" 2>"$work/nodes.err"; then fail "two nodes, one offset"; fi
expect_line "$work/nodes.err" \
  "meridian import: $work/orig.json: --clock-offset-ns is one node's offset, and this file holds several nodes (node-0, node-1, ...): import it without, or with --node; nothing imported"
m jobs >"$work/jobs2.txt"
grep -q '^bad ' "$work/jobs2.txt" && fail "job bad has spans"
grep -qE '^rt +2 +2 +38 ' "$work/jobs2.txt" || fail "rt changed"
echo "import_test: passed"
