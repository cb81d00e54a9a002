#!/usr/bin/env bash
# Slurm TaskProlog: tells each task of a job where the job's agent (started
# by prolog.sh) listens. Slurm runs it as the user before every task and
# adds the variables it prints as "export NAME=VALUE" to the task's
# environment (docs/deploy.md).
set -euo pipefail
socket=${MERIDIAN_SLURM_DIR:-/var/spool/meridian-slurm}/$SLURM_JOB_ID/agent.sock
if [ -S "$socket" ]; then
  echo "export MERIDIAN_AGENT_SOCKET=$socket"
fi
