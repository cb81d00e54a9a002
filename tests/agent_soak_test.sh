#!/usr/bin/env bash
# A node agent's memory stays flat over its life (issue 26): 5,000 short
# traced processes, each its own job with its own two threads, through one
# agent (tests/agent_soak.sh). After a warm-up of 1,000 processes its
# resident memory may grow by at most 384 KiB over the next 4,000 (an agent
# that kept every process and track it ever declared grew by about 1 MiB
# per 4,000); and every span arrives.
# ./bench/run.sh soak runs the same for 100,000 (docs/PERFORMANCE.md).
set -euo pipefail
runfiles="${TEST_SRCDIR:-$PWD/..}/${TEST_WORKSPACE:-meridian}"
work=$(mktemp -d /tmp/meridian-soak-XXXXXX)  # a short socket path
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$runfiles/tests/agent_soak.sh" "$runfiles" "$work" 5000 8 1000 >"$work/out" 2>"$work/err" ||
  fail "the soak did not run: $(grep -v coproc "$work/err" | tail -5) $(tail -5 "$work/agent.log" 2>/dev/null)"
cat "$work/out"
warm=$(awk '$1 == "sample" && $2 == 1000 { print $3 }' "$work/out")
end=$(awk '$1 == "sample" && $2 == 5000 { print $3 }' "$work/out")
[ -n "$warm" ] && [ -n "$end" ] || fail "no samples"
growth=$((end - warm))
[ "$growth" -le 384 ] || fail "the agent grew by $growth KiB from 1,000 to 5,000 processes"
grep -q "processes 5000 received 50000 sent 50000 spooled 0 .*dropped 0 rejected 0 invalid 0 " "$work/out" ||
  fail "not every span arrived: $(grep '^agent:' "$work/out")"
echo "agent_soak_test: grew $growth KiB after warm-up"
