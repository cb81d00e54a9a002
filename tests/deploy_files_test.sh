#!/usr/bin/env bash
# Checks the deployment files under deploy/ (docs/deploy.md) on this
# machine, where no cluster is reachable:
#   1. systemd units: `systemd-analyze verify`, and every flag of ExecStart=
#      and of the example environment file meridian-collector.env is one the
#      program's usage text names; that file's collector, listening beyond
#      loopback, has TLS and tokens.
#   2. TLS and tokens, with openssl and a built collector and CLI
#      (bazel-bin; this never runs bazel): deploy/make-certs.sh's files and
#      a tokens file, put where the collector unit's LoadCredential= and
#      ExecStartPre= put them, with meridian-collector.env's flags: the
#      collector starts (on 127.0.0.1) and the CLI is served with a user's
#      certificate and token, and refused without them.
#   3. Slurm scripts: `bash -n` and, if installed, shellcheck; then, as root
#      with setpriv and a built agent, prolog.sh, task-prolog.sh and
#      epilog.sh for a job of user nobody (also with TLS files and a token,
#      which the collector of 2 must accept from the job's agent), and the
#      system unit's privileges (root with no capabilities, one group).
#   4. Kubernetes manifests: tests/deploy_manifests.py (structure, agreement
#      between the files, TLS and tokens, and kubectl's offline decoding
#      where installed).
# Each kind of check is also run on a broken copy (a misspelt directive, an
# unknown flag, a syntax error, a missing field, a hostPath that disagrees,
# a collector open beyond loopback, a token file others may read, an agent
# without its token) and must fail there. Prints each failure and exits 1
# if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/meridian-deploy-XXXXXX)
chmod 0755 "$work"  # user nobody runs the agent copied in here
agent_pid=""
collector_pid=""
cleanup() {
  [ -z "$agent_pid" ] || kill "$agent_pid" 2>/dev/null || true
  [ -z "$collector_pid" ] || kill "$collector_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
passed=0
failed=0
ok() {
  passed=$((passed + 1))
  echo "  ok: $*"
}
bad() {
  failed=$((failed + 1))
  echo "deploy_files_test: FAILED: $*" >&2
}
# expect_failure WHAT CMD...: CMD, run on a broken copy, must fail.
expect_failure() {
  local what=$1
  shift
  if "$@" >"$work/negative.out" 2>&1; then
    bad "a broken copy passed: $what"
  else
    ok "a broken copy is caught: $what ($(grep -m1 . "$work/negative.out"))"
  fi
}

# 1. systemd. verify refuses a unit whose ExecStart= program is missing,
# and the programs are not installed here (nor should a test install them
# in /usr/local/bin). So each unit is verified as a copy in which only
# "/usr/local/bin/" is rewritten to a folder of stub programs. (--root=DIR
# with stubs under DIR/usr/local/bin would keep the file as it is, but
# systemd 252 refuses --root for --user units.) verify only warns about an
# unknown or misspelt directive, and exits 0: any output is a failure.
mkdir -p "$work/stubs" "$work/xdg" "$work/units/system" "$work/units/user"
for program in meridian-agent meridian-collector; do
  printf '#!/bin/sh\nexit 0\n' >"$work/stubs/$program"
  chmod +x "$work/stubs/$program"
done
known_flag() {  # known_flag FLAG SOURCE: FLAG is one of SOURCE's, exactly
  grep -oE -- '--[a-z][a-z-]*' "$2" | grep -qxF -- "$1"
}
check_unit() {  # check_unit UNIT_FILE [--user]
  local unit=$1 mode=${2:-} copy program flag flags source
  copy="$work/units/system/$(basename "$unit")"
  [ -z "$mode" ] || copy="$work/units/user/$(basename "$unit")"
  sed "s#/usr/local/bin/#$work/stubs/#g" "$unit" >"$copy"
  if ! XDG_RUNTIME_DIR="$work/xdg" systemd-analyze ${mode:+"$mode"} verify "$copy" \
    >"$work/verify.out" 2>&1 || [ -s "$work/verify.out" ]; then
    sed "s#$work/units/[a-z]*/##; s#^#$unit: #" "$work/verify.out" >&2
    return 1
  fi
  program=$(sed -n 's#^ExecStart=/usr/local/bin/\([^ ]*\).*#\1#p' "$unit")
  case $program in
    meridian-agent) source=agent/agent_usage.cc ;;
    meridian-collector) source=collector/collector_usage.cc ;;
    *) echo "$unit: ExecStart= runs no Meridian program" >&2 && return 1 ;;
  esac
  mapfile -t flags < <(grep '^ExecStart=' "$unit" | grep -oE -- '--[a-z][a-z-]*')
  for flag in "${flags[@]}"; do
    if ! known_flag "$flag" "$source"; then
      echo "$unit: $program has no flag $flag (see $source)" >&2
      return 1
    fi
  done
}
if ! command -v systemd-analyze >/dev/null; then
  bad "systemd-analyze is missing (deploy/dependencies.sh installs systemd)"
else
  for unit in deploy/systemd/*.service; do
    if check_unit "$unit"; then ok "systemd-analyze verify $unit"; else bad "$unit"; fi
  done
  for unit in deploy/systemd/user/*.service; do
    if check_unit "$unit" --user; then
      ok "systemd-analyze --user verify $unit"
    else
      bad "$unit"
    fi
  done
  mkdir "$work/broken"
  sed 's/^ProtectSystem=/ProtectSytem=/' deploy/systemd/meridian-collector.service \
    >"$work/broken/meridian-collector.service"
  expect_failure "ProtectSystem= misspelt" \
    check_unit "$work/broken/meridian-collector.service"
  sed 's/--allow-group/--allow-groups/' deploy/systemd/meridian-agent.service \
    >"$work/broken/meridian-agent.service"
  expect_failure "an unknown agent flag" \
    check_unit "$work/broken/meridian-agent.service"
fi
# The example /etc/default/meridian-collector: its flags are the
# collector's, and beyond loopback they include TLS and tokens (else the
# collector refuses to start), unless --insecure.
check_env() {  # check_env FILE
  local file=$1 listen opts flag flags
  # shellcheck source=/dev/null
  listen=$(. "$file" && echo "${MERIDIAN_LISTEN:-127.0.0.1:7070}")
  # shellcheck source=/dev/null
  opts=$(. "$file" && echo "${MERIDIAN_COLLECTOR_OPTS:-}")
  mapfile -t flags < <(grep -oE -- '--[a-z][a-z-]*' <<<"$opts")
  for flag in "${flags[@]}"; do
    if ! known_flag "$flag" collector/collector_usage.cc; then
      echo "$file: meridian-collector has no flag $flag" >&2
      return 1
    fi
  done
  case $listen in
    127.* | localhost:* | "[::1]":*) return 0 ;;
  esac
  for flag in --tls-cert --tls-key --auth-tokens; do
    if ! grep -qw -- "$flag" <<<"$opts" && ! grep -qw -- --insecure <<<"$opts"; then
      echo "$file: the collector would refuse to listen on $listen without $flag" >&2
      return 1
    fi
  done
}
if check_env deploy/systemd/meridian-collector.env; then
  ok "deploy/systemd/meridian-collector.env: known flags, TLS and tokens"
else
  bad "deploy/systemd/meridian-collector.env"
fi
mkdir -p "$work/broken"
sed 's/--auth-tokens/--auth-token/' deploy/systemd/meridian-collector.env \
  >"$work/broken/meridian-collector.env"
expect_failure "an unknown collector flag in meridian-collector.env" \
  check_env "$work/broken/meridian-collector.env"
sed 's# --auth-tokens [^ "]*##' deploy/systemd/meridian-collector.env \
  >"$work/broken/meridian-collector.env"
expect_failure "meridian-collector.env on 0.0.0.0 without --auth-tokens" \
  check_env "$work/broken/meridian-collector.env"

# 2. TLS and tokens, as the collector unit sets them up: LoadCredential=
# copies each file into the service's credentials directory (%d), readable
# by the service's user, which stat may show as 0440 (an ACL entry; here
# chmod 0440), and ExecStartPre= copies the tokens to a 0600 file in the
# runtime directory. The unit's own ExecStartPre= line runs, with only %d
# and /run/meridian-collector/ pointed into $work.
collector_bin=bazel-bin/collector/meridian-collector
cli_bin=bazel-bin/cli/meridian
collector=""
if ! command -v openssl >/dev/null || [ ! -x "$collector_bin" ] || [ ! -x "$cli_bin" ]; then
  echo "  (skipped: TLS and tokens at work, which need openssl, $collector_bin" \
    "and $cli_bin)"
else
  pki=$work/pki
  ./deploy/make-certs.sh "$pki" localhost >/dev/null
  ./deploy/make-certs.sh "$pki" --client alice >/dev/null
  agent_token=$(openssl rand -hex 16)
  alice_token=$(openssl rand -hex 16)
  mkdir -m 0700 "$work/creds" "$work/run-collector" "$work/tokens"
  printf '# TOKEN SCOPE:JOB-GLOB ...\n%s write:*\n%s read:alice-* trace:alice-*\n' \
    "$agent_token" "$alice_token" >"$work/creds/tokens"
  cp "$pki/collector.crt" "$work/creds/tls.crt"
  cp "$pki/collector.key" "$work/creds/tls.key"
  cp "$pki/ca.crt" "$work/creds/ca.crt"
  chmod 0440 "$work/creds/"*
  (umask 077 && echo "$agent_token" >"$work/tokens/agent" &&
    echo "$alice_token" >"$work/tokens/alice")
  to_work() {
    sed "s#%d#$work/creds#g; s#/run/credentials/meridian-collector.service#$work/creds#g
      s#/run/meridian-collector/#$work/run-collector/#g" "$@"
  }
  # start_collector OPTS...: a collector on 127.0.0.1 with OPTS; sets
  # $collector (its address) and $collector_pid.
  start_collector() {
    : >"$work/collector.out"
    "$collector_bin" --listen 127.0.0.1:0 --db "$(mktemp -u "$work/XXXXXX.db")" "$@" \
      >"$work/collector.out" 2>"$work/collector.err" &
    collector_pid=$!
    for _ in $(seq 100); do
      collector=$(sed -n 's/^meridian-collector listening on \([^,]*\),.*/\1/p' \
        "$work/collector.out")
      [ -z "$collector" ] || return 0
      kill -0 "$collector_pid" 2>/dev/null || break
      sleep 0.05
    done
    collector_pid=""
    cat "$work/collector.err" >&2
    return 1
  }
  stop_collector() {
    [ -z "$collector_pid" ] || kill "$collector_pid" 2>/dev/null || true
    [ -z "$collector_pid" ] || wait "$collector_pid" 2>/dev/null || true
    collector_pid=""
    collector=""
  }
  # as_alice CMD...: the CLI with alice's certificate and token.
  as_alice() {
    MERIDIAN_TLS_CA=$pki/ca.crt MERIDIAN_TLS_CERT=$pki/alice.crt \
      MERIDIAN_TLS_KEY=$pki/alice.key MERIDIAN_TOKEN_FILE=$work/tokens/alice "$@"
  }
  # The unit's ExecStartPre= (systemd's quoting is the shell's here).
  pre=$(sed -n 's/^ExecStartPre=//p' deploy/systemd/meridian-collector.service | to_work)
  # shellcheck source=/dev/null
  opts=$(. <(to_work deploy/systemd/meridian-collector.env) && echo "$MERIDIAN_COLLECTOR_OPTS")
  # shellcheck disable=SC2086 # OPTS is a list of flags, as in ExecStart=
  if eval "$pre" && [ "$(stat -c %a "$work/run-collector/tokens")" = 600 ] &&
    start_collector $opts; then
    ok "the collector unit's ExecStartPre= and meridian-collector.env's flags:" \
      "mutual TLS and tokens, credentials shown 0440"
  else
    bad "the collector with the unit's credentials: $(cat "$work/collector.err")"
  fi
  if [ -n "$collector" ] &&
    as_alice timeout 30 "$cli_bin" --collector "$collector" jobs >"$work/cli.out" 2>&1 &&
    ! MERIDIAN_TLS_CA=$pki/ca.crt MERIDIAN_TOKEN_FILE=$work/tokens/alice \
      timeout 30 "$cli_bin" --collector "$collector" jobs >/dev/null 2>&1 &&
    ! as_alice env -u MERIDIAN_TOKEN_FILE \
      timeout 30 "$cli_bin" --collector "$collector" jobs >/dev/null 2>&1 &&
    ! MERIDIAN_TLS_CA=$pki/ca.crt MERIDIAN_TLS_CERT=$pki/agent.crt \
      MERIDIAN_TLS_KEY=$pki/agent.key MERIDIAN_TOKEN_FILE=$work/tokens/agent \
      timeout 30 "$cli_bin" --collector "$collector" jobs >/dev/null 2>&1; then
    ok "make-certs.sh's certificates: the CLI is served with a user's" \
      "certificate and token; refused without the certificate, without the" \
      "token, or with the agents' token (write:* only)"
  else
    bad "the CLI against the TLS collector: $(cat "$work/cli.out")"
  fi
  # The credential itself as --auth-tokens (no copy): refused for its mode.
  # (The collector above keeps running for the Slurm checks; one that
  # started here against expectation is stopped.)
  broken_opts=${opts//$work\/run-collector\/tokens/$work\/creds\/tokens}
  saved=("$collector" "$collector_pid")
  collector_pid=""
  # shellcheck disable=SC2086
  expect_failure "--auth-tokens on the credential itself (0440)" \
    start_collector $broken_opts
  stop_collector
  collector=${saved[0]} collector_pid=${saved[1]}
fi

# 3. Slurm.
check_shell() {  # check_shell SCRIPT...
  local script
  for script in "$@"; do
    bash -n "$script" || return 1
    if command -v shellcheck >/dev/null; then
      shellcheck --shell=bash "$script" || return 1
    fi
  done
}
slurm_scripts=(deploy/slurm/*.sh deploy/slurm/meridian.sbatch)
command -v shellcheck >/dev/null || echo "  (no shellcheck here: bash -n only)"
if check_shell "${slurm_scripts[@]}"; then
  ok "bash -n, shellcheck: ${slurm_scripts[*]}"
else
  bad "the Slurm scripts"
fi
mkdir -p "$work/broken"
sed '0,/^done$/{/^done$/d}' deploy/slurm/prolog.sh >"$work/broken/prolog.sh"
expect_failure "prolog.sh without its first 'done'" \
  check_shell "$work/broken/prolog.sh"

agent_bin=bazel-bin/agent/meridian-agent
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || [ ! -x "$agent_bin" ]; then
  echo "  (skipped: the Slurm scripts and the unit's privileges at work, which" \
    "need root, setpriv and $agent_bin)"
else
  mkdir "$work/bin"
  cp "$agent_bin" "$work/bin/"
  chmod -R a+rX "$work/bin"
  agent="$work/bin/meridian-agent"
  as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
  export MERIDIAN_SLURM_CONF="$work/slurm.conf" MERIDIAN_SLURM_DIR="$work/slurm"
  export MERIDIAN_BIN="$work/bin" MERIDIAN_FLUSH_TIMEOUT=2
  export SLURM_JOB_ID=4242 SLURM_JOB_USER=nobody
  dir="$work/slurm/4242"
  # Not configured: the prolog starts nothing and succeeds.
  : >"$MERIDIAN_SLURM_CONF"
  if ./deploy/slurm/prolog.sh && [ ! -e "$dir" ]; then
    ok "prolog.sh without MERIDIAN_COLLECTOR starts nothing"
  else
    bad "prolog.sh without MERIDIAN_COLLECTOR"
  fi
  # The collector is unreachable: the agent serves and spools all the same.
  echo "MERIDIAN_COLLECTOR=127.0.0.1:9" >"$MERIDIAN_SLURM_CONF"
  ./deploy/slurm/prolog.sh || bad "prolog.sh exited non-zero"
  agent_pid=$(cat "$work/slurm/4242.pid" 2>/dev/null || true)
  socket=$(as_nobody ./deploy/slurm/task-prolog.sh)
  if [ "$(stat -c '%U %a' "$dir" 2>/dev/null)" = "nobody 700" ] &&
    [ "$(ps -o user= -p "$agent_pid")" = nobody ] &&
    [ "$socket" = "export MERIDIAN_AGENT_SOCKET=$dir/agent.sock" ] &&
    as_nobody "$agent" --status --socket "$dir/agent.sock" >/dev/null; then
    ok "prolog.sh: the job's agent runs as its user in a 0700 directory of" \
      "theirs; task-prolog.sh exports its socket"
  else
    bad "prolog.sh: $(ls -la "$dir" "$work/slurm" 2>&1; cat "$work/slurm/4242.log")"
  fi
  if ./deploy/slurm/epilog.sh && ! kill -0 "$agent_pid" 2>/dev/null &&
    [ -z "$(ls -A "$work/slurm")" ]; then
    ok "epilog.sh: the agent stopped, its directory removed"
  else
    bad "epilog.sh: $(ls -la "$work/slurm")"
  fi
  # A job whose spool holds a batch (here a stand-in file): the epilog keeps
  # the spool, so that it can be resent, and says where it is.
  export SLURM_JOB_ID=4243
  ./deploy/slurm/prolog.sh || bad "prolog.sh exited non-zero"
  agent_pid=$(cat "$work/slurm/4243.pid" 2>/dev/null || true)
  as_nobody touch "$work/slurm/4243/spool/1.batch"
  if ./deploy/slurm/epilog.sh 2>"$work/epilog.err" &&
    ! kill -0 "$agent_pid" 2>/dev/null && [ -f "$work/slurm/4243/spool/1.batch" ] &&
    grep -q "undelivered spans kept in $work/slurm/4243/spool" "$work/epilog.err"; then
    ok "epilog.sh keeps a spool that holds batches, and says so"
  else
    bad "epilog.sh with a spooled batch: $(cat "$work/epilog.err")"
  fi
  agent_pid=""

  # With TLS files and a token for each user (%u), root's and out of the
  # user's reach: the prolog gives the job's agent copies that are the
  # user's and 0600, in its environment, and the TLS collector of section 2
  # accepts them: its agent logs that the collector's clock and trace relay
  # answer (their first calls, 100 ms after its start), and no refusal. A
  # token without write scope must be seen to fail: a refusal logged first.
  if [ -n "$collector" ]; then
    tls_job() {  # tls_job JOBID TOKEN-FILE: prolog.sh with TLS for JOBID
      export SLURM_JOB_ID=$1
      install -m 0600 "$2" "$work/tokens/nobody"
      cat >"$MERIDIAN_SLURM_CONF" <<EOF
MERIDIAN_COLLECTOR=$collector
MERIDIAN_AGENT_OPTS="--clock-sync-ms 100 --control-poll-ms 100"
MERIDIAN_TLS_CA=$pki/ca.crt
MERIDIAN_TLS_CERT=$pki/agent.crt
MERIDIAN_TLS_KEY=$pki/agent.key
MERIDIAN_TOKEN_FILE=$work/tokens/%u
EOF
      ./deploy/slurm/prolog.sh || bad "prolog.sh exited non-zero"
      agent_pid=$(cat "$work/slurm/$1.pid" 2>/dev/null || true)
    }
    tls_outcome() {  # tls_outcome JOBID SECONDS: accepted, refused or undecided
      # Until both the collector's clock and trace relay answer or either is
      # refused (a poll of the log for an event, not a wait for time to
      # pass); SECONDS bounds it.
      local log=$work/slurm/$1.log
      for _ in $(seq $((10 * $2))); do
        if grep -qE 'clock sync: .*unreachable|trace relay: .*does not answer' "$log"; then
          echo refused && return
        fi
        if grep -q "clock sync: the collector's clock answers$" "$log" &&
          grep -q 'trace relay: the collector answers$' "$log"; then
          echo accepted && return
        fi
        sleep 0.1
      done
      echo undecided
    }
    tls_accepted() {  # tls_accepted JOBID SECONDS: its agent's files, and accepted
      local d=$work/slurm/$1
      [ "$(stat -c '%U %a' "$d/ca.crt" "$d/tls.crt" "$d/tls.key" "$d/token" |
        sort -u)" = "nobody 600" ] || { ls -l "$d" && return 1; }
      tr '\0' '\n' <"/proc/$agent_pid/environ" |
        grep -qx "MERIDIAN_TOKEN_FILE=$d/token" || { echo "no token file" && return 1; }
      [ "$(tls_outcome "$1" "$2")" = accepted ]
    }
    tls_job 4244 "$work/tokens/agent"
    if tls_accepted 4244 20 >"$work/tls.out" 2>&1; then
      ok "prolog.sh with TLS files and a token per user: the job's agent has" \
        "copies of its own, 0600, and the TLS collector accepts it"
    else
      bad "prolog.sh with TLS: $(cat "$work/tls.out" "$work/slurm/4244.log")"
    fi
    if ./deploy/slurm/epilog.sh && [ ! -e "$work/slurm/4244" ]; then
      ok "epilog.sh after a job with TLS: its directory and copies removed"
    else
      bad "epilog.sh after a job with TLS: $(ls -la "$work/slurm/4244")"
    fi
    tls_job 4245 "$work/tokens/alice"
    if [ "$(tls_outcome 4245 20)" = refused ]; then
      ok "a job's agent whose token has no write scope is refused"
    else
      bad "a job's agent whose token has no write scope: $(tls_outcome 4245 0)," \
        "not refused: $(cat "$work/slurm/4245.log")"
    fi
    ./deploy/slurm/epilog.sh || true
    agent_pid=""
    rm -f "$work/tokens/nobody"
  else
    echo "  (skipped: prolog.sh with TLS and a token, which needs the collector of 2)"
  fi

  # The system unit's privileges (Group=, CapabilityBoundingSet= empty):
  # root with no capabilities and group G serves G, and no one else, in a
  # 0750 root:G directory (what RuntimeDirectory= makes).
  group=$((300000 + RANDOM))
  install -d -m 0750 -o root -g "$group" "$work/run"
  setpriv --regid="$group" --clear-groups --bounding-set=-all --inh-caps=-all \
    --no-new-privs -- "$agent" --collector 127.0.0.1:9 \
    --socket "$work/run/agent.sock" --spool "$work/spool" \
    --allow-group "$group" --nice 10 >"$work/unit.log" 2>&1 &
  agent_pid=$!
  for _ in $(seq 50); do
    [ -S "$work/run/agent.sock" ] && break
    sleep 0.1
  done
  member() {  # member GID CMD...: CMD as a user whose group is GID
    local gid=$1
    shift
    setpriv --reuid=$((group + 1)) --regid="$gid" --clear-groups -- "$@"
  }
  if [ "$(stat -c '%a %g' "$work/run/agent.sock" 2>/dev/null)" = "660 $group" ] &&
    member "$group" "$agent" --status --socket "$work/run/agent.sock" >/dev/null &&
    ! member $((group + 1)) "$agent" --status --socket "$work/run/agent.sock" \
      >/dev/null 2>&1; then
    ok "a root agent with no capabilities serves its group only"
  else
    bad "the system unit's privileges: $(cat "$work/unit.log")"
  fi
  kill "$agent_pid" 2>/dev/null || true
  wait "$agent_pid" 2>/dev/null || true
  agent_pid=""
fi

# 4. Kubernetes. Debian's Python, which has python3-yaml (not a per-user one).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if "$py" tests/deploy_manifests.py deploy/kubernetes .; then
  ok "deploy/kubernetes/*.yaml"
else
  bad "the Kubernetes manifests"
fi
# broken_k8s WHAT FILE SED [PATTERN]: the manifests with one file edited
# must fail, and where PATTERN is given, say PATTERN.
broken_k8s() {
  rm -rf "$work/k8s"
  mkdir "$work/k8s"
  cp deploy/kubernetes/*.yaml "$work/k8s/"
  sed -i "$3" "$work/k8s/$2"
  expect_failure "$1" manifests_say "${4:-}" "$work/k8s"
}
manifests_say() {  # manifests_say PATTERN DIR: fails if DIR fails, saying PATTERN
  local status=0
  "$py" tests/deploy_manifests.py "$2" . >"$work/manifests.out" 2>&1 || status=$?
  if [ -n "$1" ]; then
    grep -F -- "$1" "$work/manifests.out" || cat "$work/manifests.out"
  else
    cat "$work/manifests.out"
  fi
  [ "$status" = 0 ] || ! grep -qF -- "$1" "$work/manifests.out"
}
broken_k8s "a misspelt mountPath" collector.yaml \
  's#mountPath: /var/lib/meridian$#mountPth: /var/lib/meridian#'
broken_k8s "the DaemonSet's hostPath not the training pods'" \
  agent-daemonset.yaml 's#path: /run/meridian$#path: /run/meridian-agent#'
# TLS and tokens. The collector on 0.0.0.0 with neither, nor --insecure:
broken_k8s "a collector on 0.0.0.0 without TLS, tokens or --insecure" collector.yaml \
  '/- --\(tls-cert\|tls-key\|tls-ca\|auth-tokens\)$/,+1d' "it refuses to start"
# The tokens Secret as --auth-tokens itself: fsGroup makes it 0440.
broken_k8s "the tokens Secret mounted as --auth-tokens (fsGroup: 0440)" collector.yaml \
  '/^        - name: tokens$/,/sizeLimit: 1Mi$/c\        - name: tokens\n          secret:\n            secretName: meridian-collector-tokens\n            defaultMode: 0400' \
  "will have mode 0440"
broken_k8s "an agent without its token" agent-daemonset.yaml \
  '/name: MERIDIAN_TOKEN_FILE$/,+1d' "but the agent has none"
if command -v kubectl >/dev/null; then
  broken_k8s "a misspelt securityContext field (kubectl)" collector.yaml \
    's/readOnlyRootFilesystem:/readOnlyRootFileSystem:/'
fi

if [ "$failed" -gt 0 ]; then
  echo "deploy_files_test: $failed of $((passed + failed)) checks failed" >&2
  exit 1
fi
echo "deploy_files_test: all $passed checks passed"
