#!/usr/bin/env bash
# The `meridian` CLI as a user runs it: real meridian-collector, real
# meridian-synth, exact output lines, exit codes and error messages.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
meridian_bin="$runfiles/cli/meridian"
synth_bin="$runfiles/testing/meridian-synth"
work="${TEST_TMPDIR}/cli"
rm -rf "$work" && mkdir -p "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_line() {  # expect_line FILE LINE
  grep -qxF -- "$2" "$1" || { cat "$1" >&2; fail "no line \"$2\" in $1"; }
}

# The store and the collector (SQLite, or ClickHouse in the _clickhouse
# twin).
source "$runfiles/tests/test_collector.sh" cli

"$synth_bin" --collector "$addr" --job cli --ranks 2 --nodes 1 --steps 2 --resend >"$work/synth.txt"
expect_line "$work/synth.txt" \
  "job cli: 2 ranks on 1 nodes, 2 steps: 1 batches stored (26 spans), 1 duplicates, 0 rejected"

m jobs >"$work/jobs.txt"
expect_line "$work/jobs.txt" \
  "cli                           2      1           26  2023-11-14T22:13:19.999000000Z     0.020000000"

# Rank r: 2 steps x (1020 + 11 r) us + 100 us in MPI.
m stats --job cli >"$work/stats.txt"
expect_line "$work/stats.txt" "minimum communication time = 0.002140 sec for rank 0"
expect_line "$work/stats.txt" "median communication time = 0.002140 sec for rank 0"
expect_line "$work/stats.txt" "maximum communication time = 0.002162 sec for rank 1"
expect_line "$work/stats.txt" "traced time = 0.020000 seconds (the job's first selected span to its last)."
expect_line "$work/stats.txt" \
  "MPI_Allreduce                           8        2097156.0     0.004102"

m stats --job cli --json --ranks 1 >"$work/stats.json"
python3 - "$work/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["ranks"] == [{"rank": 1, "host": "node-0", "calls": 5,
                       "comm_ns": 2162000, "elapsed_ns": 20000000,
                       "source": "spans", "user_ns": 0, "system_ns": 0,
                       "max_rss_bytes": 0, "context_switches": 0,
                       "mpi_elapsed_ns": 0, "spans_dropped": 0}], s["ranks"]
assert s["spans_dropped"] == 0, s
assert s["ops"][0]["name"] == "MPI_Allreduce" and s["ops"][0]["dur_ns"] == 2062000
PY

# meridian sql: the same figures as stats, on either store (ClickHouse's
# on a copy of the job: docs/sql.md), and the steps beside them.
m sql --job cli --json "SELECT rank, count(*) AS calls, sum(dur_ns) AS ns
  FROM spans WHERE name = 'MPI_Allreduce' GROUP BY rank ORDER BY rank" >"$work/sql.json"
python3 - "$work/sql.json" "$work/stats.json" <<'PY'
import json, sys
sql, stats = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert sql == {"columns": ["rank", "calls", "ns"],
               "rows": [[0, 4, 2040000], [1, 4, 2062000]]}, sql
ops = {o["name"]: o for o in stats["ops"]}
assert sql["rows"][1] == [1, ops["MPI_Allreduce"]["calls"],
                          ops["MPI_Allreduce"]["dur_ns"]], (sql, ops)
PY
m sql --job cli --csv "SELECT count(*) AS spans, count(DISTINCT step) AS steps FROM spans" >"$work/sql.csv"
[ "$(cat "$work/sql.csv")" = $'spans,steps\n26,2' ] || fail "sql count: $(cat "$work/sql.csv")"
if [ "${MERIDIAN_TEST_STORE:-}" = clickhouse ]; then
  m sql "SELECT count(*) FROM jobs" 2>"$work/err.txt" && fail "sql without --job on ClickHouse"
  expect_line "$work/err.txt" "meridian: sql: meridian sql over this collector's store (ClickHouse) reads one job: name it (--job J)"
fi

# --mpitrace: mpitrace's per-rank profiles, which `meridian import` reads
# back to the same statistics (to the files' millisecond).
m stats --job cli --mpitrace "$work/profiles" >/dev/null 2>"$work/mpitrace.txt"
expect_line "$work/mpitrace.txt" "meridian stats: wrote 2 profiles to $work/profiles"
[ "$(stat -c %a "$work/profiles")" = 700 ] || fail "profiles directory mode"
expect_line "$work/profiles/mpi_profile.1" "Data for MPI rank 1 of 2:"
expect_line "$work/profiles/mpi_profile.1" "total communication time = 0.002 seconds."
expect_line "$work/profiles/mpi_profile.0" "MPI timing summary for all ranks:"
m import --job cli-back "$work/profiles"/mpi_profile.* >/dev/null 2>&1
m stats --job cli-back >"$work/stats-back.txt"
expect_line "$work/stats-back.txt" \
  "MPI_Allreduce                           8        2097156.0     0.004000"
# Rank 1's file names no host: on the one rank 0's table gives (one node,
# as the job ran), with its own times (0.002 s), not the table's 0.00.
m jobs >"$work/jobs-back.txt"
grep -qE '^cli-back +2 +1 +0 ' "$work/jobs-back.txt" || { cat "$work/jobs-back.txt"; fail "cli-back: not 2 ranks on 1 node"; }
m stats --job cli-back --json >"$work/stats-back.json"
python3 - "$work/stats-back.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert [(r["rank"], r["host"], r["comm_ns"], r["source"]) for r in s["ranks"]] == [
    (0, "node-0", 2000000, "mpitrace"), (1, "node-0", 2000000, "mpitrace")], s["ranks"]
PY
m delete --job cli-back >/dev/null  # no spans: retention would keep it

m export --job cli --ranks 1 --steps 1 --category mpi -o "$work/t.json" >/dev/null
python3 - "$work/t.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
spans = [e for e in events if e["ph"] == "X"]
assert len(events) == 4 + 2, len(events)
assert [(e["name"], e["pid"], e["ts"], e["dur"]) for e in spans] == [
    ("MPI_Allreduce", 2, 18000.0, 21.0), ("MPI_Allreduce", 2, 18100.0, 1010.0)], spans
PY

# The analyses, on scenario jobs whose answers are known exactly
# (testing/scenario_job.h, docs/analysis.md).
"$synth_bin" --collector "$addr" --scenario slow-rank >"$work/synth.txt"
expect_line "$work/synth.txt" "job slow-rank: scenario slow-rank sent (4 ranks on 2 nodes)"
"$synth_bin" --collector "$addr" --scenario p2p-chain --job chain >/dev/null

m critical-path --job slow-rank --step 1 >"$work/cp.txt"
expect_line "$work/cp.txt" "Critical path of job slow-rank, step 1: 5.100 ms"
# The scenario came as one batch per node: one chunk per track (main and
# comm of 4 ranks), each holding every step, so a step reads all 8.
expect_line "$work/cp.txt" "Read 8 of the job's 8 stored chunks."
expect_line "$work/cp.txt" \
  "     0.000      5.000     2  compute        user          forward [main]"
expect_line "$work/cp.txt" \
  "     5.000      0.100     0  communication  mpi           MPI_Allreduce [main]"
expect_line "$work/cp.txt" \
  "Breakdown: compute 5.000 ms (98.0%), communication 0.100 ms (2.0%), waiting 0.000 ms (0.0%), set-up 0.000 ms (0.0%), untraced 0.000 ms (0.0%)"
expect_line "$work/cp.txt" "Explained: 100.0% of the step is in traced spans."

m critical-path --job chain --json >"$work/cp.json"
python3 - "$work/cp.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert "step" not in p and p["dur_ns"] == 4150000, p
assert [(s["rank"], s["class"], s["name"], s["dur_ns"]) for s in p["segments"]] == [
    (0, "compute", "compute", 1000000), (1, "communication", "MPI_Recv", 50000),
    (1, "compute", "compute", 1000000), (2, "communication", "MPI_Recv", 50000),
    (2, "compute", "compute", 1000000), (3, "communication", "MPI_Recv", 50000),
    (3, "compute", "compute", 1000000)], p["segments"]
assert [s.get("peer") for s in p["segments"]] == [None, 0, None, 1, None, 2, None]
assert (p["compute_ns"], p["communication_ns"], p["untraced_ns"]) == (4000000, 150000, 0)
assert p["ranks"] == [{"rank": 1, "dur_ns": 1050000}, {"rank": 2, "dur_ns": 1050000},
                      {"rank": 3, "dur_ns": 1050000}, {"rank": 0, "dur_ns": 1000000}], p["ranks"]
PY

m stragglers --job slow-rank --head 2 >"$work/st.txt"
expect_line "$work/st.txt" "Stragglers of job slow-rank: 8 collective instances, 0 matched messages."
expect_line "$work/st.txt" "     2       24.000       24.000        0.000        4        0.000"
expect_line "$work/st.txt" "Most skewed collective instances (2 of 8, ms):"
m stragglers --job chain --json >"$work/st.json"
python3 - "$work/st.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert (s["instances"], s["messages"], s["collectives"]) == (0, 3, []), s
assert [(r["rank"], r["wait_ns"], r["late_sender_wait_ns"], r["waited_ns"]) for r in s["ranks"]] == [
    (2, 3100000, 3100000, 2050000), (1, 2050000, 2050000, 1000000),
    (0, 1000000, 1000000, 0), (3, 0, 0, 3100000)], s["ranks"]
PY

m steps --job slow-rank >"$work/steps.txt"
expect_line "$work/steps.txt" "       2      5.100     20.000        0      3.500      2.600      1.000"
expect_line "$work/steps.txt" "       2      2      5.100      5.000      1.100      1.000"
m steps --job chain --json >"$work/steps.json"
# `stragglers --job chain` above made the job's one step summary and stored
# it: steps read it, every time.
m steps --job chain --json >"$work/steps2.json"
python3 - "$work/steps.json" "$work/steps2.json" <<'PY'
import json, sys
first, again = (json.load(open(p)) for p in sys.argv[1:3])
assert (first["from_summaries"], first["summarised"]) == (True, 0), first
assert (again["from_summaries"], again["summarised"]) == (True, 0), again
assert again["steps"] == first["steps"], again
s = first["steps"]
assert len(s) == 1 and s[0]["dur_ns"] == 4150000 and s[0]["slowest_rank"] == 3, s
assert [(r["rank"], r["dur_ns"], r["compute_ns"], r["communication_ns"], r["overlap_ns"])
        for r in s[0]["ranks"]] == [(0, 1050000, 1000000, 50000, 0),
                                    (1, 2100000, 1000000, 1100000, 0),
                                    (2, 3150000, 1000000, 2150000, 0),
                                    (3, 4150000, 1000000, 3150000, 0)], s
PY

m compare --job chain --ranks 0,3 >"$work/cmp.txt"
expect_line "$work/cmp.txt" "A: job chain rank 0"
expect_line "$work/cmp.txt" \
  "MPI_Recv                     mpi                  0         1        +1        0.000        3.150       +3.150              0        1048576       +1048576"
expect_line "$work/cmp.txt" \
  "compute                      user                 1         1        +0        1.000        1.000        0.000              0              0             +0"
m compare --job slow-rank --job chain --sort count --head 1 --json >"$work/cmp.json"
python3 - "$work/cmp.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert (c["a"], c["b"], c["ops_total"], len(c["ops"])) == ("job slow-rank", "job chain", 6, 1), c
op = c["ops"][0]
assert (op["name"], op["a"]["count"], op["b"]["count"], op["diff"]["count"]) == (
    "MPI_Allreduce", 32, 0, -32), op
PY

m graph --job chain --step 0 -o "$work/g.graphml" >"$work/graph.txt"
grep -qF "the dependency graph of job chain, step 0, as GraphML" "$work/graph.txt" || fail "graph line"
python3 - "$work/g.graphml" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
g = ET.parse(sys.argv[1]).getroot().find("g:graph", ns)
assert len(g.findall("g:node", ns)) == 10 and len(g.findall("g:edge", ns)) == 9
PY

m export --job slow-rank --steps 1 --critical-path -o "$work/cp-trace.json" >/dev/null
python3 - "$work/cp-trace.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
path = [(e["name"], e["ts"], e["dur"], e["args"]["class"])
        for e in events if e["ph"] == "X" and e["cat"] == "critical_path"]
assert path == [("rank 2: forward", 10000.0, 5000.0, "compute"),
                ("rank 0: MPI_Allreduce", 15000.0, 100.0, "communication")], path
PY

# What if (docs/analysis.md, "Replay"): the chain's four 1 ms computes
# halved save 2 of its 4.15 ms; both timelines as one Chrome trace.
m replay --job chain --scale 'comp*=0.5' --trace "$work/replay.json" --json \
  >"$work/replay.out" 2>"$work/replay.err"
grep -qF "meridian replay: wrote $work/replay.json" "$work/replay.err" || fail "replay trace line"
python3 - "$work/replay.out" "$work/replay.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["measured_ns"], r["predicted_ns"], r["saving_ns"], r["scaled_spans"]) == (
    4150000, 2150000, 2000000, 4), r
assert [(s["step"], s["measured_ns"], s["predicted_ns"]) for s in r["steps"]] == [
    (0, 4150000, 2150000)], r["steps"]
assert r["predicted_path"]["compute_ns"] == 2000000, r["predicted_path"]
events = json.load(open(sys.argv[2]))["traceEvents"]
names = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
assert names == {f"rank {r} {side}" for r in range(4)
                 for side in ("measured", "predicted")}, names
assert len([e for e in events if e["ph"] == "X"]) == 20
PY
m replay --job slow-rank --rank-like 2=0 >"$work/replay.txt"
expect_line "$work/replay.txt" \
  "Replay of job slow-rank, whole job: measured 35.100 ms, predicted 27.100 ms: saves 8.000 ms (22.8%)"

# The communication matrix (query/analysis/comm_matrix.h): the chain's
# three sends; the cli job's Bcast (root 0) and four Allreduces only when
# collectives are expanded.
m stats --job chain --matrix >"$work/matrix.txt"
expect_line "$work/matrix.txt" "     1      2            1          1048576"
expect_line "$work/matrix.txt" "total: 3 pairs, 3 messages, 3145728 bytes"
m stats --job chain --matrix --csv --ranks 1-3 >"$work/matrix.csv"
printf 'from,to,messages,bytes\n1,2,1,1048576\n2,3,1,1048576\n' |
  cmp -s - "$work/matrix.csv" || fail "chain's matrix: $(cat "$work/matrix.csv")"
m stats --job cli --matrix --json >"$work/matrix.json"
[ "$(cat "$work/matrix.json")" = '{"job":"cli","matrix":[]}' ] ||
  fail "cli's matrix: $(cat "$work/matrix.json")"
m stats --job cli --matrix --expand-collectives --json >"$work/matrix.json"
[ "$(cat "$work/matrix.json")" = '{"job":"cli","matrix":[{"from":0,"to":1,"messages":5,"bytes":8389624},{"from":1,"to":0,"messages":4,"bytes":8388624}]}' ] ||
  fail "cli's expanded matrix: $(cat "$work/matrix.json")"

# Errors: clear messages, the right exit codes, no partial files.
set +e
m critical-path --job slow-rank --step 9 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "unknown step: exit $rc"
grep -qF 'job slow-rank has no span tagged with step 9; `meridian steps` lists its steps' \
  "$work/err.txt" || fail "unknown step message"
m export --job slow-rank --raw-clock --critical-path -o "$work/raw.json" 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "raw-clock critical path: exit $rc"
grep -qF 'meridian: export --critical-path needs the collector'"'"'s clock: drop --raw-clock' \
  "$work/err.txt" || fail "raw-clock critical path message"
[ ! -e "$work/raw.json" ] || fail "raw-clock critical path wrote a file"
m steps --job nope 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "steps of an unknown job: exit $rc"
grep -qF "no job \"nope\" in the collector's store" "$work/err.txt" || fail "steps unknown job message"
m compare --job chain --ranks 0,7 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "compare unknown rank: exit $rc"
grep -qF 'job chain has no rank 7 (its ranks: 0-3)' "$work/err.txt" || fail "unknown rank message"
# A rank the job lacks is named, not answered with empty tables.
for args in "steps --job chain --rank 9" "stats --job chain --ranks 9"; do
  m $args >"$work/out.txt" 2>"$work/err.txt"; rc=$?
  [ $rc -eq 1 ] || fail "$args: exit $rc"
  grep -qF 'job chain has no rank 9 (its ranks: 0-3)' "$work/err.txt" ||
    fail "$args: $(cat "$work/err.txt")"
done
m compare --job chain 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "compare one side: exit $rc"
grep -qF 'compare needs --job A --job B, or --job A --ranks R1,R2' "$work/err.txt" || fail "compare usage"
m compare --job chain --ranks 0,1 --sort speed 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "bad sort: exit $rc"
grep -qF 'unknown sort "speed": use time, count, bytes or name' "$work/err.txt" || fail "sort message"
m graph --job chain --step 4 -o "$work/g2.dot" 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "graph of a missing step: exit $rc"
[ ! -e "$work/g2.dot" ] && [ ! -e "$work/g2.dot.partial" ] || fail "graph left files behind"
m graph --job chain -o "$work/g2.dot" 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "graph without a step: exit $rc"
m stragglers --job chain --head -1 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "negative head: exit $rc"
m replay --job chain --step 9 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "replay unknown step: exit $rc"
grep -qF 'job chain has no span tagged with step 9' "$work/err.txt" || fail "replay step message"
m replay --job chain --rank-like 1=9 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "replay unknown rank: exit $rc"
grep -qxF 'meridian: replay: --rank-like 1=9: the job has no spans of rank 9 (it has 4 ranks)' \
  "$work/err.txt" || fail "replay rank message: $(cat "$work/err.txt")"
m replay --job chain --scale compute 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "replay bad scale: exit $rc"
grep -qF -- '--scale "compute": write NAME_GLOB=F or CATEGORY=F' "$work/err.txt" || fail "scale message"
m replay --job chain --trace "$work/no/such/dir/r.json" 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "replay unwritable trace: exit $rc"
[ ! -e "$work/no/such/dir/r.json.partial" ] || fail "partial replay trace left"
m stats --job nope 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "unknown job: exit $rc"
grep -qF "no job \"nope\" in the collector's store (" "$work/err.txt" || fail "unknown job message"
# Nor does any error name where the collector keeps its files.
if grep -qF "$work" "$work/err.txt"; then fail "an error names the store's path"; fi
m stats --job cli --steps 3:1 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "empty step range: exit $rc"
grep -qF 'step range 3:1 is empty' "$work/err.txt" || fail "step range message"
m stats --job cli --bogus 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "unknown flag: exit $rc"
grep -qF 'unknown flag --bogus' "$work/err.txt" || fail "unknown flag message"
m stats --job cli --csv 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "--csv without --matrix: exit $rc"
grep -qF 'meridian: --csv needs --matrix' "$work/err.txt" || fail "--csv message"
m stats --job cli --expand-collectives 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "--expand-collectives without --matrix: exit $rc"
m stats --job cli --matrix --csv --json 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "--csv with --json: exit $rc"
m stats --job cli --mpitrace "$work/profiles" >/dev/null 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "--mpitrace over existing profiles: exit $rc"
grep -qF "$work/profiles/mpi_profile.0 exists; meridian stats --mpitrace never replaces a file" \
  "$work/err.txt" || fail "--mpitrace existing file message"
m stats --job cli --mpitrace "$work/stats.txt" >/dev/null 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "--mpitrace to a file: exit $rc"
grep -qF "$work/stats.txt exists and is not a directory" "$work/err.txt" ||
  fail "--mpitrace not a directory message"
m export --job cli -o "$work/missing-dir/t.json" 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "unwritable output: exit $rc"
[ ! -e "$work/missing-dir" ] || fail "export left files behind"
"$meridian_bin" --collector 127.0.0.1:1 jobs 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "unreachable collector: exit $rc"
grep -qF 'cannot reach the collector at 127.0.0.1:1' "$work/err.txt" || fail "unreachable message"
# A collector that cannot start says why and exits 1.
"$collector_bin" --listen "$addr" --db "$work/other.db" 2>"$work/err.txt" </dev/null; rc=$?
[ $rc -eq 1 ] || fail "port in use: exit $rc"
grep -qF "cannot listen on $addr" "$work/err.txt" || fail "port in use message"
"$collector_bin" --listen 127.0.0.1:0 --db "$work/no/such/dir/m.db" 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "bad store path: exit $rc"
grep -qF "cannot open store $work/no/such/dir/m.db" "$work/err.txt" || fail "bad store message"
"$collector_bin" --sync sometimes 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "bad --sync: exit $rc"
"$collector_bin" --refresh-after-ms -5 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "bad --refresh-after-ms: exit $rc"
grep -qF -- "--refresh-after-ms and --summarise-every-ms must be 0 to 86400000" "$work/err.txt" ||
  fail "bad --refresh-after-ms message"
set -e

# A job of 16,384 ranks: its trace's metadata alone (5 MB) is more than one
# gRPC message may carry (4 MiB); the export streams it in 64 KiB chunks.
"$synth_bin" --collector "$addr" --job wide --ranks 16384 --nodes 64 --steps 1 >/dev/null
m export --job wide -o "$work/wide.json" >/dev/null
[ "$(grep -o '"process_name"' "$work/wide.json" | wc -l)" -eq 16384 ] ||
  fail "a 16,384-rank export lacks ranks"

# meridian delete: a job of its own, deleted; the others stay.
"$synth_bin" --collector "$addr" --job doomed --ranks 2 --nodes 1 --steps 2 >/dev/null
# Its clocks: solved by the first query and stored by the collector's
# writer; `meridian delete` runs on that writer after it, so the next query
# reads the stored solution; --resolve solves again.
m clocks --job doomed --json >"$work/clocks1.json"
m delete --job wide >/dev/null
m clocks --job doomed --json >"$work/clocks2.json"
m clocks --job doomed >"$work/clocks2.txt"
m clocks --job doomed --resolve --json >"$work/clocks3.json"
python3 - "$work"/clocks1.json "$work"/clocks2.json "$work"/clocks3.json <<'PY'
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:])
assert (a["stored"], b["stored"], c["stored"]) == (False, True, False), (a, b, c)
assert b["solved_ns"] == a["solved_ns"] and c["solved_ns"] > a["solved_ns"]
for r in (a, b, c):
    del r["stored"], r["solved_ns"]
assert a == b == c, (a, b, c)
PY
grep -qE "^solved: [0-9-]+T[0-9:]+Z \(read from the job's stored solution\)$" "$work/clocks2.txt" ||
  fail "clocks: no stored solution line"
m delete --job doomed >"$work/delete.txt"
expect_line "$work/delete.txt" "deleted job doomed (26 spans)"
m jobs >"$work/jobs-after.txt"
grep -q '^doomed ' "$work/jobs-after.txt" && fail "deleted job still listed"
expect_line "$work/jobs-after.txt" \
  "cli                           2      1           26  2023-11-14T22:13:19.999000000Z     0.020000000"
set +e
m delete --job doomed 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "deleting twice: exit $rc"
grep -qxF "meridian: delete: no job \"doomed\" in the collector's store" "$work/err.txt" || fail "delete twice message"
set -e

# --retention-days: a collector started on this store with a 1-day retention
# deletes every job of 2023 before it serves (the first pass runs at start).

# SIGTERM: a clean exit, and the store is intact for the next collector.
kill -TERM "$pid"
wait "$pid" || fail "collector exit status $?"
# (72 batches: 64 of the wide job; the 2 imported profiles are statistics,
# no spans.)
grep -qF "stopped: 72 batches stored (114814 spans), 1 duplicate, 0 rejected" "$work/collector.log" ||
  fail "collector's last log line"
# --retention-days: a collector started on this store with a 1-day retention
# deletes every job (they are from 2023) before it serves: the first pass
# runs at start.
coproc RETAIN { exec "$collector_bin" --listen 127.0.0.1:0 --store "$store" --retention-days 1 2>"$work/retain.log"; }
retain_pid=$RETAIN_PID
read -r line <&"${RETAIN[0]}" || fail "collector with retention did not start"
raddr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
"$meridian_bin" --collector "$raddr" jobs >"$work/jobs-retained.txt"
expect_line "$work/jobs-retained.txt" "no jobs stored yet"
grep -qF 'retention: deleted job "cli" (older than 1 days)' "$work/retain.log" ||
  fail "retention log line"
kill -TERM "$retain_pid"
wait "$retain_pid" || fail "retention collector exit status $?"
echo "cli_test: all checks passed"
