#!/usr/bin/env bash
# SQL over a real job's store (docs/sql.md): an mpi4py job on 4 ranks
# (tests/sql_job.py) under Open MPI's mpirun and `meridian run`, through a
# real agent and collector, then the store read by Debian's sqlite3 shell
# with libmeridian_sqlite.so loaded, while the collector runs:
#   1. per rank, the MPI_Allreduce calls and their byte sums equal those of
#      `meridian stats --json` for that rank (and what the job makes: 16
#      calls, 16,480 bytes), and a rank's query decodes its own chunks only;
#   2. the jobs, processes and steps tables;
#   3. hostile or mistaken use: writing through the tables, loading into a
#      database that is not a store, a query of a job that does not exist:
#      a clear error or nothing, and the collector still serves with every
#      span it had;
#   4. `meridian sql` over the collector: the same figures (text, --json,
#      --csv), a second job invisible under --job; ATTACH, writes, PRAGMA,
#      load_extension, reads of main.chunks and two statements refused, a
#      cross join of every span with every span stopped at --max-rows, and
#      while a recursive query that never ends runs (until the collector's
#      30 s), other queries are answered.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
agent_bin="$runfiles/agent/meridian-agent"
meridian_bin="$runfiles/cli/meridian"
extension="$runfiles/query/sql/libmeridian_sqlite.so"
job_py="$runfiles/tests/sql_job.py"
work=$(mktemp -d /tmp/meridian-sql-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v sqlite3 >/dev/null || fail "no sqlite3 shell (Debian: sqlite3)"
/usr/bin/python3 -c 'import mpi4py' 2>/dev/null ||
  fail "no mpi4py for /usr/bin/python3 (Debian: python3-mpi4py)"

start() {  # start NAME CMD...: its first output line in $line
  local name=$1
  shift
  mkfifo "$work/$name.fifo"
  "$@" >"$work/$name.fifo" 2>"$work/$name.log" &
  pids+=("$!")
  exec {fd}<"$work/$name.fifo"
  read -r line <&"$fd" || fail "$name did not start: $(cat "$work/$name.log")"
}
db="$work/m.db"
start collector "$collector_bin" --listen 127.0.0.1:0 --db "$db"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
start agent "$agent_bin" --collector "$addr" --socket "$work/agent.sock" \
  --spool "$work/spool" --node-counters-ms 0
export MERIDIAN_AGENT_SOCKET="$work/agent.sock"
unset LD_PRELOAD MERIDIAN_PROBE_LIB
meridian=("$meridian_bin" --collector "$addr")
mpirun=$(command -v mpirun.openmpi || command -v mpirun)

# `meridian run` returns once the agent has delivered the job's spans.
"${meridian[@]}" run --job sqljob -- "$mpirun" --allow-run-as-root \
  --oversubscribe -np 4 /usr/bin/python3 -B "$job_py" >"$work/job.out" 2>&1 ||
  { cat "$work/job.out" >&2; fail "the job"; }

# sql QUERY...: the sqlite3 shell on the store, the extension loaded.
sql() { sqlite3 -readonly -bail "$db" ".load $extension" "$@"; }

# 1. MPI_Allreduce per rank, against `meridian stats`.
for rank in 0 1 2 3; do
  got=$(sql "SELECT count(*) || ' ' || sum(bytes) FROM spans WHERE job = 'sqljob'
             AND rank = $rank AND name = 'MPI_Allreduce'")
  want=$("${meridian[@]}" stats --job sqljob --ranks "$rank" --name MPI_Allreduce \
    --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
op = [o for o in s["ops"] if o["name"] == "MPI_Allreduce"][0]
print(op["calls"], op["bytes"])')
  [ "$got" = "$want" ] || fail "rank $rank: sql says $got, meridian stats $want"
  [ "$got" = "16 16480" ] || fail "rank $rank: $got MPI_Allreduce calls and bytes, not 16 16480"
done
echo "sql_test: MPI_Allreduce per rank as meridian stats: 16 calls, 16480 bytes"

# A rank's query decodes chunks of that rank's tracks only.
read -r read_chunks all_chunks < <(sql "SELECT count(*) FROM spans WHERE job = 'sqljob' AND rank = 2;
  SELECT json_extract(meridian_scan_stats(), '\$.chunks_read') || ' ' ||
         json_extract(meridian_scan_stats(), '\$.chunks')" | tail -1)
rank_chunks=$(sqlite3 -readonly "$db" "SELECT count(*) FROM main.chunks c
  JOIN main.tracks t ON t.id = c.track JOIN main.processes p ON p.id = t.process
  JOIN main.jobs j ON j.id = p.job WHERE j.name = 'sqljob' AND p.rank = 2")
[ "$read_chunks" = "$rank_chunks" ] && [ "$read_chunks" -lt "$all_chunks" ] ||
  fail "rank 2's query decoded $read_chunks chunks of $all_chunks, its own are $rank_chunks"

# 2. The other tables.
[ "$(sql "SELECT ranks, nodes, world_size, spans_dropped FROM jobs WHERE job = 'sqljob'")" = "4|1|4|0" ] ||
  fail "jobs: $(sql "SELECT * FROM jobs")"
[ "$(sql "SELECT group_concat(rank) FROM (SELECT rank FROM processes WHERE job = 'sqljob' ORDER BY rank)")" = "0,1,2,3" ] ||
  fail "processes: $(sql "SELECT * FROM processes")"
[ "$(sql "SELECT count(*) FROM spans WHERE job = 'sqljob' AND name = 'MPI_Sendrecv'")" = "48" ] ||
  fail "MPI_Sendrecv: $(sql "SELECT count(*) FROM spans WHERE name = 'MPI_Sendrecv'")"
# The same spans on the corrected axis: every end at or after its start.
[ "$(sql "SELECT count(*) FROM spans WHERE job = 'sqljob' AND (end_ns < start_ns OR start_ns IS NULL)")" = "0" ] ||
  fail "corrected times"

# 3. Mistakes and hostile use.
spans_before=$("${meridian[@]}" jobs --json | python3 -c '
import json, sys
print([j for j in json.load(sys.stdin)["jobs"] if j["job"] == "sqljob"][0]["spans"])')
if out=$(sqlite3 "$db" ".load $extension" "DELETE FROM spans" 2>&1); then
  fail "DELETE FROM spans succeeded"
fi
grep -q "may not be modified" <<<"$out" || fail "DELETE FROM spans said: $out"
if out=$(sqlite3 "$db" ".load $extension" "INSERT INTO steps(job) VALUES ('x')" 2>&1); then
  fail "INSERT INTO steps succeeded"
fi
sqlite3 "$work/plain.db" "CREATE TABLE t(x)"
if out=$(sqlite3 "$work/plain.db" ".load $extension" 2>&1); then
  fail "loaded into a database that is not a store"
fi
grep -q "not a Meridian store" <<<"$out" || fail "a plain database said: $out"
[ "$(sql "SELECT count(*) FROM spans WHERE job = 'no-such-job'")" = "0" ] ||
  fail "a job that does not exist"
spans_after=$("${meridian[@]}" jobs --json | python3 -c '
import json, sys
print([j for j in json.load(sys.stdin)["jobs"] if j["job"] == "sqljob"][0]["spans"])')
[ "$spans_before" = "$spans_after" ] && [ "$spans_after" -gt 0 ] ||
  fail "the job had $spans_before spans, now $spans_after"
[ "$(sql "SELECT count(*) FROM spans WHERE job = 'sqljob'")" = "$spans_after" ] ||
  fail "spans: $(sql "SELECT count(*) FROM spans WHERE job = 'sqljob'") rows, the job has $spans_after"
# 4. meridian sql.
"${meridian[@]}" run --job otherjob -- "$mpirun" --allow-run-as-root \
  --oversubscribe -np 2 /usr/bin/python3 -B "$job_py" >"$work/job2.out" 2>&1 ||
  { cat "$work/job2.out" >&2; fail "the second job"; }
got=$("${meridian[@]}" sql --job sqljob "SELECT rank, count(*) AS calls, sum(bytes)
  FROM spans WHERE name = 'MPI_Allreduce' GROUP BY rank ORDER BY rank")
[ "$got" = "rank|calls|sum(bytes)
0|16|16480
1|16|16480
2|16|16480
3|16|16480" ] || fail "meridian sql: $got"
[ "$("${meridian[@]}" sql --job sqljob --json "SELECT DISTINCT job FROM spans")" = \
  '{"columns":["job"],"rows":[["sqljob"]]}' ] || fail "meridian sql --job sees other jobs"
[ "$("${meridian[@]}" sql --csv "SELECT job, ranks FROM jobs ORDER BY job")" = "job,ranks
otherjob,2
sqljob,4" ] || fail "meridian sql --csv: $("${meridian[@]}" sql --csv "SELECT job, ranks FROM jobs")"
# refused QUERY SAID: the query fails, saying SAID.
refused() {
  if out=$("${meridian[@]}" sql "$1" 2>&1); then fail "meridian sql ran: $1"; fi
  grep -qF "$2" <<<"$out" || fail "meridian sql \"$1\" said: $out"
}
refused "ATTACH DATABASE '$work/x.db' AS x" "ATTACH is refused"
refused "DELETE FROM spans" "table spans may not be modified"
refused "DELETE FROM main.jobs" "anything but a SELECT"
refused "PRAGMA journal_mode = DELETE" "PRAGMA journal_mode is refused"
refused "SELECT load_extension('$extension')" "load_extension() is refused"
refused "SELECT count(*) FROM main.chunks" "reading the store's table chunks"
refused "SELECT 1; DELETE FROM main.jobs" "one statement at a time"
if out=$("${meridian[@]}" sql --max-rows 1000 "SELECT a.name, b.name FROM spans a, spans b" 2>&1); then
  fail "a cross join of every span with every span returned"
fi
grep -q "more than 1000 rows" <<<"$out" || fail "the cross join said: $out"
# A query that never ends, beside others that are answered.
"${meridian[@]}" --request-timeout 60 sql "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL
  SELECT x + 1 FROM c) SELECT count(*) FROM c" >"$work/endless.out" 2>&1 &
endless=$!
[ "$("${meridian[@]}" sql "SELECT count(*) FROM processes WHERE job = 'sqljob'")" = "count(*)
4" ] || fail "a query beside the endless one"
"${meridian[@]}" jobs >/dev/null || fail "meridian jobs beside the endless query"
if wait "$endless"; then fail "the endless query returned: $(cat "$work/endless.out")"; fi
grep -q "ran past its 30s" "$work/endless.out" || fail "the endless query said: $(cat "$work/endless.out")"
[ "$(sql "SELECT count(*) FROM spans WHERE job = 'sqljob'")" = "$spans_after" ] ||
  fail "spans changed after meridian sql"
echo "sql_test: passed"
