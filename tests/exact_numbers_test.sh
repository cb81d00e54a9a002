#!/usr/bin/env bash
# Every number a user recorded comes back exactly, in every output (issue
# 25): exact_numbers_job sends random spans, counters and args (the whole
# double and int64 ranges: ±0, subnormals, 2^53 + 1, the largest int64)
# through a real collector's ingest into its store; the Chrome, Kineto and
# Perfetto exports and every --json command are then read back by
# exact_numbers_check.py and compared, bit for bit, with what was recorded;
# the Chrome trace is also imported back and exported again.
# Three seeds. With MERIDIAN_TEST_STORE=clickhouse, on a real ClickHouse.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
meridian_bin="$runfiles/cli/meridian"
job_bin="$runfiles/tests/exact_numbers_job"
check="$runfiles/tests/exact_numbers_check.py"
work="${TEST_TMPDIR}/exact"
rm -rf "$work" && mkdir -p "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

# The store and the collector (SQLite, or ClickHouse in the _clickhouse
# twin).
source "$runfiles/tests/test_collector.sh" exact

for seed in 1 2 3; do
  job="exact-$seed"
  out="$work/$seed"
  mkdir -p "$out"
  "$job_bin" --collector "$addr" --job "$job" --seed "$seed" --expect "$out/expect.json" >/dev/null \
    || fail "exact_numbers_job --seed $seed"
  m export --job "$job" -o "$out/t.json" >/dev/null
  m export --job "$job" --format kineto --per-rank "$out/kineto" >/dev/null
  m export --job "$job" -o "$out/p.pftrace" >/dev/null
  protoc --proto_path="$runfiles/query/export/testdata" \
    --decode=meridian.perfetto_subset.Trace perfetto_subset.proto \
    <"$out/p.pftrace" >"$out/p.txt" || fail "the Perfetto trace does not decode"
  m jobs --json >"$out/jobs.json"
  m stats --job "$job" --json >"$out/stats.json"
  m steps --job "$job" --json >"$out/steps.json"
  for step in 0 1 2 3; do
    m critical-path --job "$job" --step "$step" --json >"$out/cp_$step.json"
  done
  m stats --job "$job" --matrix --json >"$out/matrix.json"
  m compare --job "$job" --ranks 0,1 --json >"$out/compare.json"
  m stragglers --job "$job" --json >"$out/stragglers.json"
  m clocks --job "$job" --json >"$out/clocks.json"
  m replay --job "$job" --json >"$out/replay.json"
  python3 "$check" "$out/expect.json" "$out" || fail "seed $seed (files in $out)"
  # The Chrome trace imported back (meridian import) and exported again:
  # the same numbers.
  m import --job "$job-again" "$out/t.json" 2>"$out/import.log" \
    || { cat "$out/import.log" >&2; fail "import of the Chrome trace"; }
  mkdir -p "$out/again"
  m export --job "$job-again" -o "$out/again/t.json" >/dev/null
  python3 "$check" --chrome-only "$out/expect.json" "$out/again" \
    || fail "seed $seed, imported again (files in $out)"
done
echo "PASS"
