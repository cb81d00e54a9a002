#!/usr/bin/env bash
# The node agent over a long life (tests/agent_soak.sh): --processes short
# traced processes (default 100,000), each its own job with two threads,
# 8 at a time, through one agent into a collector on this machine. Prints
# the agent's resident memory after every --every processes (once all
# before were delivered) and, last, one JSON line:
#   {"bench":"soak","processes":N,"rss_kib":[[processes,kib],...],
#    "warm_kib":K,"end_kib":E,"growth_after_warmup_kib":E-K,
#    "seconds":S,"processes_per_s":R}
# warm_kib is the sample at --warm processes (default a tenth).
set -euo pipefail
cd "$(dirname "$0")/.."
processes=100000 every=10000 warm=""
while [ $# -gt 0 ]; do
  case "$1" in
    --processes) processes=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --warm) warm=$2; shift 2 ;;
    *) echo "soak: unknown flag $1" >&2; exit 2 ;;
  esac
done
[ -n "$warm" ] || warm=$((processes / 10))
bazel build //agent:meridian-agent //collector:meridian-collector \
  //capture/probe:libmeridian_probe.so //tests:thread_churn_job >&2
bin=$(bazel info bazel-bin 2>/dev/null)
work=$(mktemp -d /tmp/meridian-soak-XXXXXX)
trap 'rm -rf "$work"' EXIT
start=$(date +%s.%N)
bash tests/agent_soak.sh "$bin" "$work" "$processes" 8 "$every" | tee "$work/out"
end=$(date +%s.%N)
python3 - "$work/out" "$processes" "$warm" "$start" "$end" <<'PY'
import json, sys
out, processes, warm, start, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
samples = [[int(a), int(b)] for _, a, b in (l.split() for l in open(out) if l.startswith("sample "))]
warm_kib = min((s for s in samples if s[0] >= warm), key=lambda s: s[0])[1]
seconds = end - start
print(json.dumps({"bench": "soak", "processes": processes, "rss_kib": samples,
                  "warm_kib": warm_kib, "end_kib": samples[-1][1],
                  "growth_after_warmup_kib": samples[-1][1] - warm_kib,
                  "seconds": round(seconds, 1),
                  "processes_per_s": round(processes / seconds, 1)}))
PY
