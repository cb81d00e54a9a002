#!/usr/bin/env bash
# Slurm Prolog: starts this job's meridian-agent on this node, as the job's
# user, so that it serves that user only (docs/deploy.md, docs/security.md).
#   slurm.conf:  Prolog=/etc/slurm/meridian-prolog.sh  PrologFlags=Alloc
#                Epilog=/etc/slurm/meridian-epilog.sh
#                TaskProlog=/etc/slurm/meridian-task-prolog.sh
#   /etc/default/meridian-slurm:  MERIDIAN_COLLECTOR=headnode:7070
#     (unset: no agent is started), MERIDIAN_AGENT_OPTS="--nice 10",
#     MERIDIAN_BIN (/usr/local/bin), MERIDIAN_SLURM_DIR (/var/spool/meridian-slurm)
#     and, for a collector with TLS and tokens, root's files:
#     MERIDIAN_TLS_CA, MERIDIAN_TLS_CERT, MERIDIAN_TLS_KEY, MERIDIAN_TOKEN_FILE
#     ("%u" in a path is the job's user: a token for each user)
# The socket is MERIDIAN_SLURM_DIR/JOBID/agent.sock, in a directory of the
# user's, mode 0700, which task-prolog.sh gives the tasks as
# MERIDIAN_AGENT_SOCKET. Slurm runs this as root with SLURM_JOB_ID and
# SLURM_JOB_USER set. A prolog that fails sets the node DOWN, so this one
# logs what went wrong and exits 0: the job then runs untraced.
set -euo pipefail
PATH=/usr/sbin:/usr/bin:/sbin:/bin
conf=${MERIDIAN_SLURM_CONF:-/etc/default/meridian-slurm}
# shellcheck source=/dev/null
[ ! -r "$conf" ] || . "$conf"
job=${SLURM_JOB_ID:-}
[ -n "${MERIDIAN_COLLECTOR:-}" ] && [ -n "$job" ] || exit 0
base=${MERIDIAN_SLURM_DIR:-/var/spool/meridian-slurm}
dir=$base/$job
give_up() {
  logger -t meridian-prolog "job $job: $*, not traced" 2>/dev/null || true
  echo "meridian-prolog: job $job: $*, not traced" >&2
  exit 0
}
trap 'give_up "failed at line $LINENO"' ERR

user=${SLURM_JOB_USER:-}
if ! uid=$(id -u "$user") || ! gid=$(id -g "$user"); then
  give_up "no user \"$user\""
fi
# The base is root's and writable by root only; each job's directory is the
# user's alone. A directory left by an earlier job of this id is replaced
# (rm does not follow links).
if ! { mkdir -p "$base" && chmod 0755 "$base" && rm -rf -- "$dir" &&
  mkdir -m 0700 "$dir"; }; then
  give_up "cannot make $dir"
fi
# TLS and the token (docs/deploy.md): the agent runs as the user and reads
# these at start, so each file the configuration names is copied into the
# job's directory, the user's and 0600 (a token file with any group or
# other permission is refused), while that directory is still root's: the
# user cannot plant a link there first. The epilog removes the copies.
security=()
for var in MERIDIAN_TLS_CA MERIDIAN_TLS_CERT MERIDIAN_TLS_KEY MERIDIAN_TOKEN_FILE; do
  from=${!var:-}
  [ -n "$from" ] || continue
  from=${from//"%u"/$user}
  case $var in
    MERIDIAN_TLS_CA) copy=$dir/ca.crt ;;
    MERIDIAN_TLS_CERT) copy=$dir/tls.crt ;;
    MERIDIAN_TLS_KEY) copy=$dir/tls.key ;;
    *) copy=$dir/token ;;
  esac
  if ! install -m 0600 -o "$uid" -g "$gid" -- "$from" "$copy"; then
    rm -rf -- "$dir"
    give_up "cannot copy $var ($from)"
  fi
  security+=("$var=$copy")
done
chown "$uid:$gid" "$dir" || give_up "cannot give $dir to $user"
# The log and the pid file stay in root's directory, where the user cannot
# plant links; the user may read the log.
log=$base/$job.log
install -m 0640 -o root -g "$gid" /dev/null "$log" || give_up "cannot make $log"
# A new session, so that Slurm's end-of-prolog kill of this script's process
# group spares the agent. setpriv drops to the user before the agent runs.
# shellcheck disable=SC2086 # MERIDIAN_AGENT_OPTS is a list of flags
setsid env -i PATH="$PATH" LANG=C.UTF-8 "${security[@]}" \
  setpriv --reuid="$uid" --regid="$gid" --init-groups -- \
  "${MERIDIAN_BIN:-/usr/local/bin}/meridian-agent" \
  --collector "$MERIDIAN_COLLECTOR" --socket "$dir/agent.sock" \
  ${MERIDIAN_AGENT_OPTS:-} </dev/null >>"$log" 2>&1 &
echo $! >"$base/$job.pid"
# Ready before the job's first task looks for it (else that task's
# `meridian run` would start an agent of its own).
for _ in $(seq 50); do
  [ -S "$dir/agent.sock" ] && exit 0
  kill -0 "$!" 2>/dev/null || give_up "the agent exited: $(tail -n 3 "$log")"
  sleep 0.1
done
give_up "the agent did not start in 5 s (see $log)"
