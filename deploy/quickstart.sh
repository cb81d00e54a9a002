#!/usr/bin/env bash
# Meridian in one command: installs what is missing, builds, starts a
# collector on an embedded SQLite file, runs a real job traced (the example
# data-parallel MPI program, examples/data_parallel.cc, on 4 ranks under
# mpirun and `meridian run`, which starts a node agent for it), prints the
# jobs and the job's statistics, writes the merged Chrome trace, and stops
# the collector, unless --keep-running.
#
#   ./deploy/quickstart.sh [--keep-running] [--dir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

keep_running=0
dir=quickstart-out
while [ $# -gt 0 ]; do
  case "$1" in
    --keep-running) keep_running=1 ;;
    --dir) dir="$2"; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "quickstart: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

./deploy/dependencies.sh
echo "== building" >&2
bazel build //collector:meridian-collector //cli:meridian \
  //agent:meridian-agent //capture/probe:libmeridian_probe.so \
  //examples:data_parallel >&2
bin=$(bazel info bazel-bin 2>/dev/null)

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
db="$dir/meridian.db"
trace="$dir/quickstart.trace.json"
rm -f "$db" "$db-wal" "$db-shm"

# The collector prints "meridian-collector listening on HOST:PORT, ..." once
# it serves; reading that line is how we wait for it.
coproc COLLECTOR { exec "$bin/collector/meridian-collector" --listen 127.0.0.1:0 --db "$db" 2>"$dir/collector.log"; }
collector_pid=$COLLECTOR_PID
stop_collector() {
  if [ "$keep_running" -eq 0 ] && kill -0 "$collector_pid" 2>/dev/null; then
    kill -TERM "$collector_pid"
    wait "$collector_pid" || true
  fi
}
trap stop_collector EXIT
if ! read -r line <&"${COLLECTOR[0]}"; then
  echo "quickstart: the collector did not start; see $dir/collector.log" >&2
  cat "$dir/collector.log" >&2
  exit 1
fi
address=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
echo "== collector listening on $address, store $db" >&2

meridian=("$bin/cli/meridian" --collector "$address")
# The agent gets its own socket here, so the quickstart never meets an agent
# that serves something else; it exits once the job is delivered.
export MERIDIAN_AGENT_SOCKET="$dir/agent.sock"
# Open MPI keeps its session sockets under TMPDIR, which must be short.
export TMPDIR=/tmp
echo "== meridian run -- mpirun -np 4 examples/data_parallel" >&2
"${meridian[@]}" run --job quickstart -- \
  mpirun --oversubscribe $([ "$(id -u)" -eq 0 ] && echo --allow-run-as-root) \
  -np 4 "$bin/examples/data_parallel" --steps 20
echo
"${meridian[@]}" jobs
echo
"${meridian[@]}" stats --job quickstart
echo
"${meridian[@]}" critical-path --job quickstart --step 10
echo
"${meridian[@]}" stragglers --job quickstart --head 5
echo
"${meridian[@]}" export --job quickstart --critical-path -o "$trace" >&2
python3 -c 'import json,sys; n=len(json.load(open(sys.argv[1]))["traceEvents"]); print(f"{n} trace events, valid JSON")' "$trace" >&2

if [ "$keep_running" -eq 1 ]; then
  echo "collector still running at $address (pid $collector_pid): export MERIDIAN_COLLECTOR=$address; stop it with kill $collector_pid"
fi
echo "Merged trace (open in https://ui.perfetto.dev or chrome://tracing): $trace"
