#!/usr/bin/env bash
# The `meridian` CLI as a user runs it: real meridian-collector, real
# meridian-synth, exact output lines, exit codes and error messages.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
meridian_bin="$runfiles/query/meridian"
synth_bin="$runfiles/agent/meridian-synth"
work="${TEST_TMPDIR}/cli"
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

"$synth_bin" --collector "$addr" --job cli --ranks 2 --nodes 1 --steps 2 --resend >"$work/synth.txt"
expect_line "$work/synth.txt" \
  "job cli: 2 ranks on 1 nodes, 2 steps: 1 batches stored (26 spans), 1 duplicates, 0 rejected"

m jobs >"$work/jobs.txt"
expect_line "$work/jobs.txt" \
  "cli                           2      1           26  2023-11-14T22:13:19.999Z     0.020000"

# Rank r: 2 steps x (1020 + 11 r) us + 100 us in MPI.
m stats --job cli >"$work/stats.txt"
expect_line "$work/stats.txt" "minimum communication time = 0.002140 sec for rank 0"
expect_line "$work/stats.txt" "median communication time = 0.002140 sec for rank 0"
expect_line "$work/stats.txt" "maximum communication time = 0.002162 sec for rank 1"
expect_line "$work/stats.txt" "total elapsed time = 0.020000 seconds."
expect_line "$work/stats.txt" \
  "MPI_Allreduce                           8        2097156.0     0.004102"

m stats --job cli --json --ranks 1 >"$work/stats.json"
python3 - "$work/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["ranks"] == [{"rank": 1, "host": "node-0", "calls": 5,
                       "comm_ns": 2162000, "elapsed_ns": 20000000}], s["ranks"]
assert s["ops"][0]["name"] == "MPI_Allreduce" and s["ops"][0]["dur_ns"] == 2062000
PY

m export --job cli --ranks 1 --steps 1 --category mpi -o "$work/t.json" >/dev/null
python3 - "$work/t.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
spans = [e for e in events if e["ph"] == "X"]
assert len(events) == 4 + 2, len(events)
assert [(e["name"], e["pid"], e["ts"], e["dur"]) for e in spans] == [
    ("MPI_Allreduce", 1, 18000.0, 21.0), ("MPI_Allreduce", 1, 18100.0, 1010.0)], spans
PY

# Errors: clear messages, the right exit codes, no partial files.
set +e
m stats --job nope 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "unknown job: exit $rc"
grep -qF 'no job "nope" in store' "$work/err.txt" || fail "unknown job message"
m stats --job cli --steps 3:1 2>"$work/err.txt"; rc=$?
[ $rc -eq 1 ] || fail "empty step range: exit $rc"
grep -qF 'step range 3:1 is empty' "$work/err.txt" || fail "step range message"
m stats --job cli --bogus 2>"$work/err.txt"; rc=$?
[ $rc -eq 2 ] || fail "unknown flag: exit $rc"
grep -qF 'unknown flag --bogus' "$work/err.txt" || fail "unknown flag message"
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
set -e

# SIGTERM: a clean exit, and the store is intact for the next collector.
kill -TERM "$pid"
wait "$pid" || fail "collector exit status $?"
grep -qF "stopped: 1 batches stored (26 spans), 1 duplicate, 0 rejected" "$work/collector.log" ||
  fail "collector's last log line"
echo "cli_test: all checks passed"
