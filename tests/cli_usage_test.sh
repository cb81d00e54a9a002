#!/usr/bin/env bash
# meridian's command line as a user meets it (cli/command_tree.h): help in
# every form, --version on every program, each command's own flags, the
# exit codes of usage errors (2, and 125 for meridian run), $MERIDIAN_COLLECTOR,
# --json of jobs and trace, run's `--` passing the command untouched, and the
# bash completion and man pages generated from the same definition. Exact
# output lines and exit codes.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
meridian_bin="$runfiles/cli/meridian"
collector_bin="$runfiles/collector/meridian-collector"
agent_bin="$runfiles/agent/meridian-agent"
synth_bin="$runfiles/testing/meridian-synth"
work="${TEST_TMPDIR}/cli_usage"
rm -rf "$work" && mkdir -p "$work"
unset MERIDIAN_COLLECTOR

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_line() {  # expect_line FILE LINE
  grep -qxF -- "$2" "$1" || { cat "$1" >&2; fail "no line \"$2\" in $1"; }
}
# expect_status CODE CMD...: runs CMD, its stdout and stderr to $work/out
# and $work/err, and checks its exit status.
expect_status() {
  local want=$1 rc=0
  shift
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$work/err" >&2; fail "$* exited $rc, not $want"; }
}

# 1. Help: every form prints the same text on stdout, exit 0.
expect_status 0 "$meridian_bin" --help
cp "$work/out" "$work/help.txt"
expect_line "$work/help.txt" "usage: meridian [--collector HOST:PORT] [--request-timeout S] COMMAND [flags]"
expect_line "$work/help.txt" "  critical-path  what bounds the step (or job) time"
for form in "-h" "help"; do
  expect_status 0 "$meridian_bin" "$form"
  cmp -s "$work/out" "$work/help.txt" || fail "meridian $form differs from --help"
done
expect_status 0 "$meridian_bin" help critical-path
cp "$work/out" "$work/cp-help.txt"
expect_line "$work/cp-help.txt" "usage: meridian critical-path --job J [flags]"
expect_line "$work/cp-help.txt" "  --step N    the step (default: the whole job)"
for form in "critical-path --help" "critical-path -h" "--collector h:1 critical-path -h"; do
  read -ra words <<<"$form"
  expect_status 0 "$meridian_bin" "${words[@]}"
  cmp -s "$work/out" "$work/cp-help.txt" || fail "meridian $form differs from help critical-path"
done
# completion and man are listed (a user who installed by hand finds them).
grep -qE '^  completion ' "$work/help.txt" || fail "completion not listed"
grep -qE '^  man ' "$work/help.txt" || fail "man not listed"

# 2. --version on every program install.sh installs.
version=$("$meridian_bin" --version)
[[ $version =~ ^meridian\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "meridian --version: $version"
number=${version#meridian }
for program in "$collector_bin" "$agent_bin" "$synth_bin"; do
  name=${program##*/}
  expect_status 0 "$program" --version
  [ "$(cat "$work/out")" = "$name $number" ] || fail "$name --version: $(cat "$work/out")"
  for form in -h --help; do
    expect_status 0 "$program" "$form"
    grep -qF "usage: $name" "$work/out" || fail "$name $form: $(cat "$work/out")"
  done
done

# 3. Each command takes only its own flags: refused with the command's
#    usage on stderr, exit 2.
expect_status 2 "$meridian_bin" critical-path --job j --steps 10
[ "$(head -1 "$work/err")" = \
  "meridian: critical-path: unknown flag --steps (a flag of trace, export, stats, waits, replay)" ] ||
  fail "critical-path --steps: $(head -1 "$work/err")"
tail -n +3 "$work/err" | cmp -s - "$work/cp-help.txt" || fail "critical-path's usage not printed"
[ ! -s "$work/out" ] || fail "a usage error printed on stdout"
expect_status 2 "$meridian_bin" jobs --steps 3
expect_line "$work/err" "meridian: jobs: unknown flag --steps (a flag of trace, export, stats, waits, replay)"
expect_line "$work/err" "usage: meridian jobs [flags]"
expect_status 2 "$meridian_bin" stats --job j --bogus
expect_line "$work/err" "meridian: stats: unknown flag --bogus"
expect_status 2 "$meridian_bin" stats
expect_line "$work/err" "meridian: stats needs --job J"
expect_status 2 "$meridian_bin" graph --job j --step 1
expect_line "$work/err" "meridian: graph needs -o FILE"
expect_status 2 "$meridian_bin"
expect_line "$work/err" "meridian: no command given"
expect_line "$work/err" "usage: meridian [--collector HOST:PORT] [--request-timeout S] COMMAND [flags]"
expect_status 2 "$meridian_bin" nope
expect_line "$work/err" 'meridian: unknown command "nope"'
expect_status 2 "$meridian_bin" help nope
expect_line "$work/err" 'meridian: unknown command "nope"'
expect_status 2 "$meridian_bin" --request-timeout 0 jobs
expect_line "$work/err" "meridian: --request-timeout must be seconds (1 to 86400)"
expect_line "$work/err" "usage: meridian jobs [flags]"

# 4. meridian run's own usage errors exit 125, never 2.
expect_status 125 "$meridian_bin" run ./app -o out
expect_line "$work/err" "meridian: run needs -- before the command: meridian run [flags] -- CMD..."
expect_line "$work/err" "usage: meridian run [flags] -- CMD..."
expect_status 125 "$meridian_bin" run --job j --
expect_line "$work/err" "meridian: run needs -- CMD..."
expect_status 125 "$meridian_bin" run --bogus -- true
expect_line "$work/err" "meridian: run: unknown flag --bogus"
expect_status 125 "$meridian_bin" run --flush-timeout soon -- true
expect_line "$work/err" "meridian: --flush-timeout must be seconds (0 to 86400)"

# 4b. The collector's limits out of range: exit 2, the flag's range named,
#     nothing started (every one refused before a store is opened).
while IFS='|' read -r flag value message; do
  expect_status 2 "$collector_bin" --listen 127.0.0.1:0 --db "$work/limits.db" "$flag" "$value"
  [ "$(cat "$work/err")" = "meridian-collector: $message" ] ||
    fail "collector $flag $value: $(cat "$work/err")"
done <<'LIMITS'
--retention-days|36501|--retention-days must be 0 to 36500
--max-batch-mib|0|--max-batch-mib must be 1 to 1024
--analysis-memory-mib|16777217|--analysis-memory-mib must be 1 to 16777216
--analysis-wait-ms|-1|--analysis-wait-ms must be 0 to 3600000
--refresh-after-ms|86400001|--refresh-after-ms and --summarise-every-ms must be 0 to 86400000
--summarise-every-ms|x|--refresh-after-ms and --summarise-every-ms must be 0 to 86400000
--max-streams|100001|--max-streams must be 1 to 100000
--max-queue-mib|1048577|--max-queue-mib must be 1 to 1048576
LIMITS
[ ! -e "$work/limits.db" ] || fail "a collector refused by its limits created its store"

# 4c. The agent's flags out of range: exit 2, the range named on the first
#     line of stderr (the usage after it), nothing served.
while IFS='|' read -r flag value message; do
  expect_status 2 "$agent_bin" --collector 127.0.0.1:1 --socket "$work/limits.sock" \
    --spool "$work/limits-spool" "$flag" "$value"
  [ "$(head -1 "$work/err")" = "meridian-agent: $message" ] ||
    fail "agent $flag $value: $(head -1 "$work/err")"
done <<'LIMITS'
--drain-ms|0|--spool-max-bytes and --drain-ms must be positive
--max-drain-ms|10|--max-drain-ms must be milliseconds, --drain-ms to 60000
--ack-window|4097|--ack-window must be 0 to 4096 batches
--ack-timeout-ms|0|--ack-timeout-ms must be 1 to 3600000
--nice|20|--nice must be 0 to 19
--max-connections|0|--max-connections must be 1 to 65536
--max-connections-per-user|129|--max-connections-per-user must be 1 to --max-connections
--idle-timeout-ms|3600001|--idle-timeout-ms must be 1 to 3600000
--clock-sync-ms|0|--clock-sync-ms must be milliseconds (1 to 3600000)
--clock-offset-ns|3600000000001|--clock-offset-ns must be ns within +-1 hour
--clock-drift-ppm|1e9|--clock-drift-ppm must be a number within +-1000
--control-poll-ms|0|--control-poll-ms must be milliseconds (1 to 3600000)
LIMITS
[ ! -e "$work/limits.sock" ] || fail "an agent refused by its flags made its socket"

# 5. The collector: --collector before or after the command, else
#    $MERIDIAN_COLLECTOR, else 127.0.0.1:7070.
expect_status 1 env MERIDIAN_COLLECTOR=127.0.0.1:1 "$meridian_bin" jobs
grep -qF "cannot reach the collector at 127.0.0.1:1 " "$work/err" || fail "env collector: $(cat "$work/err")"
expect_status 1 env MERIDIAN_COLLECTOR=127.0.0.1:1 "$meridian_bin" jobs --collector 127.0.0.1:2
grep -qF "cannot reach the collector at 127.0.0.1:2 " "$work/err" || fail "flag collector: $(cat "$work/err")"

coproc COLLECTOR { exec "$collector_bin" --listen 127.0.0.1:0 --db "$work/m.db" 2>"$work/collector.log"; }
pid=$COLLECTOR_PID
trap 'kill -9 $pid 2>/dev/null || true' EXIT
read -r line <&"${COLLECTOR[0]}" || fail "collector did not start"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
export MERIDIAN_COLLECTOR=$addr

# 6. jobs: text and --json.
"$synth_bin" --collector "$addr" --job usage --ranks 2 --nodes 1 --steps 2 >/dev/null
"$meridian_bin" jobs >"$work/jobs.txt"
expect_line "$work/jobs.txt" \
  "JOB                       RANKS  NODES        SPANS  START (UTC)                        DURATION(s)"
expect_line "$work/jobs.txt" \
  "usage                         2      1           26  2023-11-14T22:13:19.999000000Z     0.020000000"
"$meridian_bin" jobs --json >"$work/jobs.json"
[ "$(cat "$work/jobs.json")" = \
  '{"jobs":[{"job":"usage","ranks_seen":2,"world_size":0,"incomplete":false,"nodes":1,"spans":26,"spans_dropped":0,"start_ns":1699999999999000000,"end_ns":1700000000019000000,"health":""}]}' ] ||
  fail "jobs --json: $(cat "$work/jobs.json")"

# 7. trace --json through the collector: no agent serves the job; the JSON
#    says so on stdout, exit 1.
expect_status 1 "$meridian_bin" trace --job nope --steps 2 --timeout 1 --json
[ "$(cat "$work/out")" = \
  '{"job":"nope","steps":2,"seconds":0,"processes":0,"unanswered":0,"nodes":[]}' ] ||
  fail "trace --json: $(cat "$work/out")"
expect_line "$work/err" "meridian: trace: no process of job nope on the 0 agents that answered"

# 8. run: everything after -- is the command's, untouched (no -o rewrite);
#    --append adds to a job the collector holds; --json's summary.
# A short path: a Unix socket's is at most 107 bytes.
agent_dir=$(mktemp -d /tmp/meridian-usage-XXXXXX)
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$agent_dir"' EXIT
export MERIDIAN_AGENT_SOCKET="$agent_dir/agent/agent.sock"
expect_status 0 "$meridian_bin" run --job passed -- /bin/echo -o out --job x -- --help
[ "$(cat "$work/out")" = "-o out --job x -- --help" ] || fail "run passed: $(cat "$work/out")"
expect_line "$work/err" "meridian run: job passed"
expect_status 125 "$meridian_bin" run --job usage -- /bin/true
grep -qF "already holds job usage" "$work/err" || fail "a held --job: $(cat "$work/err")"
expect_status 0 "$meridian_bin" run --job usage --append --json -- /bin/sh -c 'exit 0'
python3 - "$work/out" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
assert (summary["job"], summary["exit_status"], summary["delivery"]) == (
    "usage", 0, "delivered"), summary
PY
expect_status 3 "$meridian_bin" run --job three -- /bin/sh -c 'exit 3'
expect_status 127 "$meridian_bin" run --job missing -- "$work/no-such-program"

# 9. Bash completion, from `meridian completion bash`.
"$meridian_bin" completion bash >"$work/completion.bash"
mkdir -p "$work/files/sub" && touch "$work/files/trace.json"
complete_words() {  # complete_words WORD...: COMPREPLY, joined by |
  (
    cd "$work/files"
    # shellcheck disable=SC1091
    source "$work/completion.bash"
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _meridian
    IFS='|'
    echo "${COMPREPLY[*]}"
  )
}
expect_completion() {  # expect_completion WANT WORD...
  local want=$1 got
  shift
  got=$(complete_words "$@")
  [ "$got" = "$want" ] || fail "completing $*: \"$got\", not \"$want\""
}
expect_completion "stats|stragglers|steps" meridian st
expect_completion "critical-path" meridian --collector h:1 cr
expect_completion "--step" meridian critical-path --job j --s
expect_completion "--json|--help" meridian jobs --
expect_completion "chrome|perfetto|kineto" meridian export --format ""
expect_completion "time|count|bytes|name" meridian compare --sort ""
expect_completion "trace.json" meridian export --job j -o tr
expect_completion "sub" meridian export --per-rank s
expect_completion "trace.json" meridian import --job j t
expect_completion "" meridian stats --job ""
expect_completion "--" meridian run --job j ""
expect_completion "trace.json" meridian run -- ./app t
expect_completion "import" meridian help im
# shellcheck disable=SC1091
(source "$work/completion.bash" && complete -p meridian) |
  grep -qxF "complete -F _meridian meridian" || fail "no complete line"

# 10. Man pages: valid roff (groff without warnings), rendered by man.
mkdir -p "$work/man1"
"$meridian_bin" man --dir "$work/man1"
pages=$(cd "$work/man1" && echo *.1)
[ "$pages" = "meridian-clocks.1 meridian-compare.1 meridian-completion.1 meridian-critical-path.1 meridian-delete.1 meridian-export.1 meridian-graph.1 meridian-health.1 meridian-help.1 meridian-import.1 meridian-jobs.1 meridian-man.1 meridian-replay.1 meridian-run.1 meridian-sql.1 meridian-stats.1 meridian-steps.1 meridian-stragglers.1 meridian-trace.1 meridian-waits.1 meridian.1" ] ||
  fail "man pages: $pages"
"$meridian_bin" man export | cmp -s - "$work/man1/meridian-export.1" || fail "man export differs"
if command -v groff >/dev/null; then
  for page in "$work"/man1/*.1; do
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    [ -z "$warnings" ] || fail "groff on ${page##*/}: $warnings"
  done
fi
if command -v man >/dev/null; then
  MANWIDTH=80 man -l "$work/man1/meridian-critical-path.1" 2>/dev/null | col -bx >"$work/man.txt"
  expect_line "$work/man.txt" "       meridian-critical-path - what bounds the step (or job) time"
  expect_line "$work/man.txt" "       meridian critical-path --job J [flags]"
  expect_line "$work/man.txt" "       --step N"
  expect_line "$work/man.txt" "              the step (default: the whole job)"
  MANWIDTH=80 man -l "$work/man1/meridian.1" 2>/dev/null | col -bx >"$work/man.txt"
  expect_line "$work/man.txt" "       MERIDIAN_COLLECTOR"
  expect_line "$work/man.txt" "              the default of --collector HOST:PORT where it is not given"
else
  grep -qxF '.B \-\-step N' "$work/man1/meridian-critical-path.1" || fail "roff of --step"
fi

kill -TERM "$pid"
wait "$pid" || fail "collector exit status $?"
echo "cli_usage_test: all checks passed"
