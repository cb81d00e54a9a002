#!/usr/bin/env bash
# Slurm Epilog: stops the agent prolog.sh started for this job on this node,
# once it has delivered what it holds (docs/deploy.md). Runs as root; like
# the prolog it never fails (an epilog that fails sets the node DOWN).
# Spans the collector has not acknowledged by MERIDIAN_FLUSH_TIMEOUT (30 s)
# stay in the job's spool, MERIDIAN_SLURM_DIR/JOBID/spool, which is then
# kept, and the epilog says so in the system log.
set -euo pipefail
PATH=/usr/sbin:/usr/bin:/sbin:/bin
conf=${MERIDIAN_SLURM_CONF:-/etc/default/meridian-slurm}
# shellcheck source=/dev/null
[ ! -r "$conf" ] || . "$conf"
job=${SLURM_JOB_ID:-}
[ -n "$job" ] || exit 0
base=${MERIDIAN_SLURM_DIR:-/var/spool/meridian-slurm}
dir=$base/$job
pidfile=$base/$job.pid
[ -f "$pidfile" ] || exit 0
say() {
  logger -t meridian-epilog "job $job: $*" 2>/dev/null || true
  echo "meridian-epilog: job $job: $*" >&2
}
trap 'say "failed at line $LINENO"; exit 0' ERR

pid=$(cat "$pidfile")
# Only the agent of this job: its command line names this job's socket
# (the pid may have been reused if the agent died).
if [ -n "$pid" ] && grep -qaF -- "$dir/agent.sock" "/proc/$pid/cmdline" 2>/dev/null; then
  uid=$(stat -c %u "/proc/$pid")
  gid=$(stat -c %g "/proc/$pid")
  # As the agent's user: clients only talk to an agent of their own user.
  setpriv --reuid="$uid" --regid="$gid" --clear-groups -- \
    "${MERIDIAN_BIN:-/usr/local/bin}/meridian-agent" --flush \
    --timeout "${MERIDIAN_FLUSH_TIMEOUT:-30}" --socket "$dir/agent.sock" \
    >>"$base/$job.log" 2>&1 || say "not everything was acknowledged"
  # SIGTERM: the agent spools what is still unacknowledged, then exits.
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
fi
rm -f -- "$pidfile"
# The prolog's copies of the TLS files and the token end with the job, even
# where the spool is kept (rm does not follow links).
rm -rf -- "$dir/ca.crt" "$dir/tls.crt" "$dir/tls.key" "$dir/token"
# Spooled batches are the spool's *.batch files.
if compgen -G "$dir/spool/*.batch" >/dev/null; then
  say "undelivered spans kept in $dir/spool, log in $base/$job.log" \
    "(docs/deploy.md: resending a kept spool)"
else
  rm -rf -- "$dir" "$base/$job.log"
fi
exit 0
