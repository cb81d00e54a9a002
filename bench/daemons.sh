# Sourced by the benches that run a collector and an agent on this machine
# (colocated, ended).
#
# bench_work NAME: makes `work` (a temporary directory /tmp/meridian-NAME-*)
# and `pids`, and traps exit to stop every pid in `pids`, print the tail of
# each WORK/*.log if the bench failed, and remove `work`.
#
# start_daemons COLLECTOR: starts COLLECTOR (--listen 127.0.0.1:0, --db
# WORK/bench.db, --metrics 127.0.0.1:0, else its default flags) and the
# tree's agent (--socket WORK/agent.sock, --spool WORK/spool), each waited
# for by the line it prints once it serves; sets db, socket, address,
# metrics (host:port), collector_pid, agent_pid and meridian (the CLI and
# its --collector), and adds both pids to `pids`. Needs `bin` (bazel-bin).
bench_work() {
  work="$(mktemp -d "/tmp/meridian-$1-XXXXXX")"
  pids=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}
bench_cleanup() {
  local status=$? pid log
  for pid in ${pids[@]+"${pids[@]}"}; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then
    for log in "$work"/*.log; do
      [ -f "$log" ] && { echo "== $log" >&2; tail -n 40 "$log" >&2; }
    done
  fi
  rm -rf "$work"
}
# serve NAME COMMAND...: starts COMMAND (stdout to a FIFO, stderr to
# WORK/NAME.log), adds its pid to `pids`, sets served_pid, and waits for the
# line it prints once it serves (read through the FIFO, kept open so that it
# never gets SIGPIPE) into served_line.
serve() {
  local name=$1 fd
  shift
  mkfifo "$work/$name.out"
  "$@" >"$work/$name.out" 2>"$work/$name.log" &
  served_pid=$!
  pids+=("$served_pid")
  exec {fd}<"$work/$name.out"
  if ! read -r served_line <&"$fd"; then
    echo "bench: the $name did not start" >&2
    return 1
  fi
}
start_daemons() {
  db="$work/bench.db"
  socket="$work/agent.sock"
  serve collector "$1" --listen 127.0.0.1:0 --db "$db" --metrics 127.0.0.1:0
  collector_pid=$served_pid
  address="${served_line#*listening on }"
  address="${address%%,*}"
  # Its metrics' port, from its log (written before the line above).
  metrics=$(sed -n 's|.*metrics on http://\([^/]*\)/metrics.*|\1|p' "$work/collector.log")
  serve agent "$bin/agent/meridian-agent" --collector "$address" \
    --socket "$socket" --spool "$work/spool"
  agent_pid=$served_pid
  echo "collector $address (pid $collector_pid), agent $socket (pid $agent_pid)" >&2
  meridian=("$bin/cli/meridian" --collector "$address")
}
