# Sourced by the benches that run a collector and an agent on this machine
# (colocated, ended). start_daemons COLLECTOR WORK: starts COLLECTOR
# (--listen 127.0.0.1:0, --db WORK/bench.db, --metrics 127.0.0.1:0, else its
# default flags) and the tree's agent (--socket WORK/agent.sock, --spool
# WORK/spool), each waited for by the line it prints once it serves; sets
# db, socket, address, metrics (host:port), collector_pid, agent_pid and
# meridian (the CLI and its --collector), and adds both pids to `pids` (the
# caller's cleanup stops them). Needs `bin` (bazel-bin).
start_daemons() {
  local collector=$1 work=$2 line
  db="$work/bench.db"
  socket="$work/agent.sock"
  # Reading a server's line through a FIFO kept open, so that it never gets
  # SIGPIPE, is how we wait for it.
  mkfifo "$work/collector.out" "$work/agent.out"
  "$collector" --listen 127.0.0.1:0 --db "$db" \
    --metrics 127.0.0.1:0 >"$work/collector.out" 2>"$work/collector.log" &
  collector_pid=$!
  pids+=("$collector_pid")
  exec {collector_out}<"$work/collector.out"
  if ! read -r line <&"$collector_out"; then
    echo "bench: the collector did not start" >&2
    return 1
  fi
  address="${line#*listening on }"
  address="${address%%,*}"
  # Its metrics' port, from its log (written before the line above).
  metrics=$(sed -n 's|.*metrics on http://\([^/]*\)/metrics.*|\1|p' "$work/collector.log")
  "$bin/agent/meridian-agent" --collector "$address" --socket "$socket" \
    --spool "$work/spool" >"$work/agent.out" 2>"$work/agent.log" &
  agent_pid=$!
  pids+=("$agent_pid")
  exec {agent_out}<"$work/agent.out"
  if ! read -r line <&"$agent_out"; then
    echo "bench: the agent did not start" >&2
    return 1
  fi
  echo "collector $address (pid $collector_pid), agent $socket (pid $agent_pid)" >&2
  meridian=("$bin/cli/meridian" --collector "$address")
}
