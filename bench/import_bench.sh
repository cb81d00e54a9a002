#!/usr/bin/env bash
# ./bench/run.sh import [--events N] [--rounds R]
# What a user pays to bring a large trace in and take it out again, on one
# machine with a real collector (SQLite store, full sync):
#   - `meridian import` of a Chrome trace of N events (default 1,000,000:
#     complete events on 8 ranks x 4 threads, with args), read, parsed,
#     sent and stored: events/s over the command's wall time;
#   - `meridian export` of that job as Chrome JSON and as Perfetto
#     protobuf, alternated R times (default 3): bytes/s of each (file bytes
#     over wall time) and their sizes. Medians.
# The last line is JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
events=1000000
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --events) events="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "usage: ./bench/run.sh import [--events N] [--rounds R]" >&2; exit 2 ;;
  esac
done
bin="$(bazel info bazel-bin 2>/dev/null)"
work=$(mktemp -d /tmp/meridian-import-bench.XXXXXX)
pid=""
trap '[ -n "$pid" ] && { kill -9 $pid; wait $pid; } 2>/dev/null; rm -rf "$work"' EXIT

python3 - "$work/big.json" "$events" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
base = 1764000000000000  # us
with open(path, "w") as f:
    f.write('{"traceEvents":[\n')
    for i in range(n):
        rank, thread = i % 8, (i // 8) % 4
        t = base + i * 0.5
        f.write('%s{"ph":"X","name":"op_%d","cat":"user","pid":%d,"tid":%d,'
                '"ts":%.3f,"dur":0.25,"args":{"step":%d,"bytes":%d}}\n'
                % ("," if i else "", i % 50, rank + 1, thread + 1, t,
                   i // 100000, i % 4096))
    f.write('],"displayTimeUnit":"ns"}\n')
PY
file_bytes=$(stat -c %s "$work/big.json")

coproc COLLECTOR { exec "$bin/collector/meridian-collector" --listen 127.0.0.1:0 --db "$work/m.db" 2>"$work/collector.log"; }
pid=$COLLECTOR_PID
read -r line <&"${COLLECTOR[0]}"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
m() { "$bin/cli/meridian" --collector "$addr" "$@"; }

now() { date +%s.%N; }
t0=$(now)
m import --job big "$work/big.json" 2>"$work/import.err" || { cat "$work/import.err" >&2; exit 1; }
t1=$(now)
cat "$work/import.err" >&2
import_s=$(python3 -c "print($t1 - $t0)")

json_rates=() perfetto_rates=()
for r in $(seq "$rounds"); do
  for fmt in chrome perfetto; do
    out="$work/out.$fmt"
    a=$(now)
    m export --job big --format "$fmt" -o "$out" >/dev/null
    b=$(now)
    bytes=$(stat -c %s "$out")
    rate=$(python3 -c "print($bytes / ($b - $a))")
    if [ "$fmt" = chrome ]; then json_rates+=("$rate"); json_bytes=$bytes
    else perfetto_rates+=("$rate"); perfetto_bytes=$bytes; fi
    echo "round $r: $fmt export: $bytes bytes at $(python3 -c "print(round($rate / 1e6, 1))") MB/s" >&2
    rm -f "$out"
  done
done

python3 - "$events" "$file_bytes" "$import_s" "$json_bytes" "$perfetto_bytes" \
  "${json_rates[*]}" "${perfetto_rates[*]}" <<'PY'
import json, statistics, sys
events, file_bytes, import_s = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
json_bytes, perfetto_bytes = int(sys.argv[4]), int(sys.argv[5])
jr = [float(x) for x in sys.argv[6].split()]
pr = [float(x) for x in sys.argv[7].split()]
out = {
    "bench": "import",
    "events": events,
    "chrome_file_bytes": file_bytes,
    "import_s": round(import_s, 2),
    "import_events_per_s": round(events / import_s),
    "export_json_bytes": json_bytes,
    "export_perfetto_bytes": perfetto_bytes,
    "perfetto_size_ratio": round(perfetto_bytes / json_bytes, 3),
    "export_json_bytes_per_s": round(statistics.median(jr)),
    "export_perfetto_bytes_per_s": round(statistics.median(pr)),
    "export_json_events_per_s": round(events * statistics.median(jr) / json_bytes),
    "export_perfetto_events_per_s": round(events * statistics.median(pr) / perfetto_bytes),
}
print(json.dumps(out))
PY
