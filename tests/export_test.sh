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
m export --job ex --format kineto --per-rank "$work/kineto" >/dev/null
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

echo "export_test: passed"
