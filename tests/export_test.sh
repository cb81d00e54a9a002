#!/usr/bin/env bash
# `meridian export` as a user runs it against a real collector: gzip by
# name, cutting a job by steps and by ranks, one file per rank, and the
# options it refuses; Perfetto and Kineto files decoded and checked.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
meridian_bin="$runfiles/cli/meridian"
synth_bin="$runfiles/testing/meridian-synth"
work="${TEST_TMPDIR}/export"
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

"$synth_bin" --collector "$addr" --job ex --ranks 4 --nodes 2 --steps 5 >/dev/null

# 1. -o FILE.gz: the same trace as without, gzipped.
m export --job ex -o "$work/t.json" >/dev/null
m export --job ex -o "$work/t.json.gz" >"$work/gz.out"
grep -qE "^wrote $work/t.json.gz \([0-9]+ bytes, $(stat -c %s "$work/t.json") before gzip\)$" "$work/gz.out" \
  || { cat "$work/gz.out"; fail "gzip summary"; }
gunzip -c "$work/t.json.gz" | cmp - "$work/t.json" || fail "gzip content differs"
[ ! -e "$work/t.json.gz.partial" ] || fail "partial file left"

# 2. --split-by step 2: steps 0-1, 2-3, 4; every step's spans in its file.
m export --job ex -o "$work/s.json" --split-by step 2 >"$work/split.out"
expect_line "$work/split.out" "3 files of job ex"
python3 - "$work" <<'PY'
import json, sys, collections
work = sys.argv[1]
def steps(path):
    t = json.load(open(path))["traceEvents"]
    return collections.Counter(e["args"]["step"] for e in t
                               if e["ph"] == "X" and "step" in e["args"])
whole = steps(f"{work}/t.json")
parts = [steps(f"{work}/s.steps-{a}-{b}.json") for a, b in ((0, 1), (2, 3), (4, 4))]
assert sorted(whole) == [0, 1, 2, 3, 4], whole
assert sorted(parts[0]) == [0, 1] and sorted(parts[1]) == [2, 3] and sorted(parts[2]) == [4], parts
assert sum(parts, collections.Counter()) == whole
PY

# 3. --split-by rank 3 and --per-rank: the ranks' processes, all of them.
m export --job ex -o "$work/r.json" --split-by rank 3 >/dev/null
m export --job ex --per-rank "$work/ranks" >/dev/null
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def ranks(path):
    t = json.load(open(path))["traceEvents"]
    return sorted(e["args"]["name"].split()[1] for e in t
                  if e["ph"] == "M" and e["name"] == "process_name")
assert ranks(f"{work}/r.ranks-0-2.json") == ["0", "1", "2"]
assert ranks(f"{work}/r.ranks-3-3.json") == ["3"]
for r in range(4):
    assert ranks(f"{work}/ranks/ex_rank_{r}.json") == [str(r)]
PY

# 3b. --format perfetto (from the name .pftrace): decoded with the proto
#     definitions, the same slices as the JSON export, one process track per
#     rank, flows between the collectives' members; smaller than JSON.
m export --job ex -o "$work/p.pftrace" >/dev/null
protoc --proto_path="$runfiles/query/export/testdata" \
  --decode=meridian.perfetto_subset.Trace perfetto_subset.proto \
  <"$work/p.pftrace" >"$work/p.txt" || fail "the Perfetto trace does not decode"
begins=$(grep -c "type: TYPE_SLICE_BEGIN" "$work/p.txt")
ends=$(grep -c "type: TYPE_SLICE_END" "$work/p.txt")
x=$(python3 -c "import json,sys; print(sum(e['ph'] == 'X' for e in json.load(open(sys.argv[1]))['traceEvents']))" "$work/t.json")
[ "$begins" = "$x" ] && [ "$ends" = "$x" ] || fail "perfetto: $begins begins, $ends ends, $x X events in JSON"
for r in 0 1 2 3; do
  grep -q "process_name: \"rank $r (node-$((r / 2)))\"" "$work/p.txt" || fail "perfetto: no process of rank $r"
done
grep -q "flow_ids" "$work/p.txt" || fail "perfetto: no flows"
[ "$(stat -c %s "$work/p.pftrace")" -lt "$(stat -c %s "$work/t.json")" ] || fail "perfetto not smaller than JSON"

# 3c. --format kineto --per-rank: one file per rank that HTA reads
#     ("rank": N with a space, before traceEvents) and meridian import
#     takes back as that rank.
m export --job ex --format kineto --per-rank "$work/kineto/" >"$work/kineto.out"
# A directory given with its slash: the paths said have one.
grep -qxE "wrote $work/kineto/ex_0\.pt\.trace\.json \([0-9]+ bytes\)" "$work/kineto.out" ||
  { cat "$work/kineto.out"; fail "per-rank paths: $(head -1 "$work/kineto.out")"; }
for r in 0 1 2 3; do
  f="$work/kineto/ex_$r.pt.trace.json"
  head -c 400 "$f" | grep -qE "\"rank\": $r\b" || fail "kineto: $f has no \"rank\": $r"
  m import --job kb "$f" 2>"$work/kb.err" || { cat "$work/kb.err"; fail "kineto import"; }
  grep -qF "of rank $r (" "$work/kb.err" || { cat "$work/kb.err"; fail "kineto rank $r"; }
done

# 4. Options that do not fit: refused with the reason, nothing written.
if m export --job ex -o "$work/k.json" --format kineto 2>"$work/k.err"; then
  fail "a kineto export of 4 ranks into one file"
fi
expect_line "$work/k.err" \
  "meridian: export: a kineto file holds one rank: use --per-rank DIR, or --ranks N"
if m export --job ex -o "$work/x.json" --split-by node 2 2>"$work/x.err"; then
  fail "--split-by node"
fi
expect_line "$work/x.err" \
  "meridian: export: --split-by takes step or rank, not \"node\""
if m export --job nosuch -o "$work/n.json" 2>"$work/n.err"; then
  fail "an unknown job"
fi
grep -q "no job \"nosuch\"" "$work/n.err" || { cat "$work/n.err"; fail "unknown job message"; }
[ ! -e "$work/k.json" ] && [ ! -e "$work/x.json" ] && [ ! -e "$work/n.json" ] \
  || fail "a refused export wrote a file"

# 5. --from/--to cut the timeline the trace shows (corrected, from its
#    origin otherData.epoch_ns), not the nodes' raw clocks: slow-rank with
#    node-1 (ranks 2, 3) 3 ms ahead, window [12, 14) ms. The windowed export
#    holds exactly the whole export's spans that end at or after 12 ms and
#    start before 14 ms in the whole export's own timeline; the raw-clock
#    export's window (raw times from the job's first span) holds others,
#    and `meridian stats` counts the communication the export holds.
"$synth_bin" --collector "$addr" --scenario slow-rank --job skew --node1-offset-ns 3000000 >/dev/null
m export --job skew -o "$work/skew.json" >/dev/null
m export --job skew --from 12ms --to 14ms -o "$work/skew-w.json" >/dev/null
m export --job skew --raw-clock -o "$work/skew-raw.json" >/dev/null
m export --job skew --raw-clock --from 12ms --to 14ms -o "$work/skew-raw-w.json" >/dev/null
m stats --job skew --from 12ms --to 14ms --json >"$work/skew-stats.json"
python3 - "$work" <<'PY'
import collections, json, sys
from decimal import Decimal
work = sys.argv[1]
def load(name):
    return json.load(open(f"{work}/{name}"), parse_float=Decimal)
def spans(trace):
    procs = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    out = collections.Counter()
    for e in trace["traceEvents"]:
        if e["ph"] == "M" or "ts" not in e:
            continue
        start = int(e["ts"] * 1000)  # ns from the trace's origin
        out[(procs[e["pid"]], e["name"], start, start + int(e.get("dur", 0) * 1000))] += 1
    return out
def window(all_spans, lo, hi):
    return collections.Counter({k: n for k, n in all_spans.items()
                                if k[3] >= lo and k[2] < hi})
whole, cut = load("skew.json"), load("skew-w.json")
assert cut["otherData"]["epoch_ns"] == whole["otherData"]["epoch_ns"], "origins differ"
expected = window(spans(whole), 12_000_000, 14_000_000)
got = spans(cut)
assert got == expected, (sorted(got - expected), sorted(expected - got))
# Step 1 of every rank: step and forward (4 + 4), the comm threads'
# Allreduces shown [11, 12) ms (ending at --from: in; 4), the main
# Allreduce of ranks 0, 1, 3 (3; rank 2's starts at 15 ms).
names = collections.Counter(k[1] for k in got.elements())
assert names == {"step": 4, "forward": 4, "MPI_Allreduce": 7}, names
assert sum(got.values()) == 15, got
# Raw: node-1's spans 3 ms late, so its comm Allreduces (raw [14, 15) ms)
# and rank 3's main one are out.
raw = spans(load("skew-raw-w.json"))
assert raw == window(spans(load("skew-raw.json")), 12_000_000, 14_000_000)
raw_names = collections.Counter(k[1] for k in raw.elements())
assert raw_names == {"step": 4, "forward": 4, "MPI_Allreduce": 4}, raw_names
stats = json.load(open(f"{work}/skew-stats.json"))
calls = {o["name"]: int(o["calls"]) for o in stats["ops"]}
assert calls == {"MPI_Allreduce": 7}, calls  # stats counts communication
PY

echo "export_test: passed"
