#!/usr/bin/env bash
# Every Meridian test: installs what is missing, builds, runs `bazel test //...`
# (unit tests beside the code, the integration test and the CLI test under
# tests/), and ends with a "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/dependencies.sh

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
bazel test //... 2>&1 | tee "$log" || status=$?
total=$(grep -oE 'Executed [0-9]+ out of ([0-9]+) tests?' "$log" | grep -oE '[0-9]+ tests?$' | grep -oE '[0-9]+' || echo 0)
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)' "$log" || true)
echo "$((total - failed)) passed, ${failed} failed"
exit $status
