#!/usr/bin/env bash
# Checks the deployment files under deploy/ (docs/deploy.md) on this
# machine, where no cluster is reachable:
#   1. systemd units: `systemd-analyze verify`, and every flag of ExecStart=
#      is one the program's usage text names.
#   2. Slurm scripts: `bash -n` and, if installed, shellcheck; then, as root
#      with setpriv and a built agent (bazel-bin; this never runs bazel),
#      prolog.sh, task-prolog.sh and epilog.sh for a job of user nobody, and
#      the system unit's privileges (root with no capabilities, one group).
#   3. Kubernetes manifests: tests/deploy_manifests.py (structure, agreement
#      between the files, and kubectl's offline decoding where installed).
# Each kind of check is also run on a broken copy (a misspelt directive, an
# unknown flag, a syntax error, a missing field, a hostPath that disagrees)
# and must fail there. Prints each failure and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/meridian-deploy-XXXXXX)
chmod 0755 "$work"  # user nobody runs the agent copied in here
agent_pid=""
cleanup() {
  [ -z "$agent_pid" ] || kill "$agent_pid" 2>/dev/null || true
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
    meridian-agent) source=agent/agent_main.cc ;;
    meridian-collector) source=collector/collector_main.cc ;;
    *) echo "$unit: ExecStart= runs no Meridian program" >&2 && return 1 ;;
  esac
  mapfile -t flags < <(grep '^ExecStart=' "$unit" | grep -oE -- '--[a-z][a-z-]*')
  for flag in "${flags[@]}"; do
    if ! grep -qF -- "$flag" "$source"; then
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

# 2. Slurm.
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

# 3. Kubernetes. Debian's Python, which has python3-yaml (not a per-user one).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if "$py" tests/deploy_manifests.py deploy/kubernetes .; then
  ok "deploy/kubernetes/*.yaml"
else
  bad "the Kubernetes manifests"
fi
# broken_k8s WHAT FILE SED: the manifests with one file edited must fail.
broken_k8s() {
  rm -rf "$work/k8s"
  mkdir "$work/k8s"
  cp deploy/kubernetes/*.yaml "$work/k8s/"
  sed -i "$3" "$work/k8s/$2"
  expect_failure "$1" "$py" tests/deploy_manifests.py "$work/k8s" .
}
broken_k8s "a misspelt mountPath" collector.yaml \
  's#mountPath: /var/lib/meridian$#mountPth: /var/lib/meridian#'
broken_k8s "the DaemonSet's hostPath not the training pods'" \
  agent-daemonset.yaml 's#path: /run/meridian$#path: /run/meridian-agent#'
if command -v kubectl >/dev/null; then
  broken_k8s "a misspelt securityContext field (kubectl)" collector.yaml \
    's/readOnlyRootFilesystem:/readOnlyRootFileSystem:/'
fi

if [ "$failed" -gt 0 ]; then
  echo "deploy_files_test: $failed of $((passed + failed)) checks failed" >&2
  exit 1
fi
echo "deploy_files_test: all $passed checks passed"
