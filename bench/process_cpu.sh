# Sourced by the benches that read a daemon's CPU time from /proc.
# cpu_ticks PID: its user + system time so far, in clock ticks (fields 14
# and 15 of /proc/PID/stat; the name, field 2, is cut off first).
# thread_ticks PID NAME: the same for its threads named NAME.
# ticks_ns TICKS: clock ticks in ns.
cpu_ticks() {
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
thread_ticks() {
  local task total=0
  for task in /proc/"$1"/task/*; do
    [ "$(cat "$task/comm" 2>/dev/null)" = "$2" ] || continue
    # A thread that exits meanwhile counts 0.
    total=$((total + $(sed 's/^.*) //' "$task/stat" 2>/dev/null | awk '{ print $12 + $13 }' || echo 0)))
  done
  echo "$total"
}
ticks_ns() {
  awk -v t="$1" -v tck="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", t * 1e9 / tck }'
}
