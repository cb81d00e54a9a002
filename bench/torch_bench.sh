#!/usr/bin/env bash
# ./bench/run.sh torch [--pairs N] [--steps N]: what tracing costs a real
# PyTorch job. tests/torch_ddp_job.py (DistributedDataParallel over gloo, 2
# ranks on this machine, a 3-layer MLP, 1.6 MB of gradients a step) run
# untraced and traced, alternated, N pairs (default 7), each run N steps
# (default 100), with a collector and an agent on this machine (their CPU
# is part of what the job pays here):
#   untraced     python3 torch_ddp_job.py, no probe (`import meridian` does
#                nothing)
#   traced       under `meridian run`: steps, record_function ranges and
#                every c10d operation recorded (the default)
#   no_c10d      traced with MERIDIAN_TORCH_COLLECTIVES=0: what the
#                collective capture itself adds, beside the rest of tracing
#   ops          traced with MERIDIAN_TORCH_OPS=1: every aten operator and
#                autograd node a phase too
# A run's step time is the median of rank 0's steps after the first 5 (DDP
# rebuilds its buckets in step 1); each pair's ratio is traced over untraced
# (and no_c10d over untraced), run one after the other; the figures are the
# medians of the ratios. Target (issue 50): traced / untraced <= 1.03
# (operators off); ops / untraced is reported beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/daemons.sh

pairs=7
steps=100
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) echo "usage: ./bench/run.sh torch [--pairs N] [--steps N]" >&2; exit 2 ;;
  esac
done

bin=bazel-bin
python=/usr/bin/python3
bench_work torch
extension=$("$python" capture/torch/build_extension.py "$work/ext" 2>"$work/build.log")
start_daemons "$bin/collector/meridian-collector"
export PYTHONPATH="$PWD/capture/probe/python"
export MERIDIAN_TORCH_EXTENSION="$extension"

# run NAME MODE: the job's two workers (as torchrun starts them); rank 0's
# last line in WORK/NAME.0.out.
run() {
  local name=$1 mode=$2 port rank workers=()
  port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  for rank in 0 1; do
    local cmd=("$python" -B tests/torch_ddp_job.py --steps "$steps")
    case "$mode" in
      untraced) ;;
      traced) cmd=("$bin/cli/meridian" --collector "$address" run -- "${cmd[@]}") ;;
      no_c10d) cmd=(env MERIDIAN_TORCH_COLLECTIVES=0 "$bin/cli/meridian"
                    --collector "$address" run -- "${cmd[@]}") ;;
      ops) cmd=(env MERIDIAN_TORCH_OPS=1 "$bin/cli/meridian"
                --collector "$address" run -- "${cmd[@]}") ;;
    esac
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$rank LOCAL_RANK=$rank \
      WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 TORCHELASTIC_RUN_ID="$name" \
      MERIDIAN_AGENT_SOCKET=$([ "$mode" = untraced ] || echo "$socket") \
      "${cmd[@]}" >"$work/$name.$rank.out" 2>"$work/$name.$rank.log" &
    workers+=("$!")
  done
  wait "${workers[0]}" && wait "${workers[1]}"
}

for pair in $(seq "$pairs"); do
  # Alternate which goes first, so that neither always follows the other.
  if [ $((pair % 2)) -eq 1 ]; then order="untraced traced no_c10d ops"; else order="ops no_c10d traced untraced"; fi
  for mode in $order; do
    run "p$pair-$mode" "$mode"
  done
  echo "pair $pair done" >&2
done

"$python" - "$work" "$pairs" "$steps" <<'PY'
import json, statistics, sys
work, pairs, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def step_ms(name):
    last = open("%s/%s.0.out" % (work, name)).read().splitlines()[-1]
    line = json.loads(last)
    return statistics.median(line["step_ns"][5:]) / 1e6, line["capture"]

rows = []
for p in range(1, pairs + 1):
    u, _ = step_ms("p%d-untraced" % p)
    t, capture = step_ms("p%d-traced" % p)
    n, _ = step_ms("p%d-no_c10d" % p)
    o, _ = step_ms("p%d-ops" % p)
    rows.append((u, t, n, capture, o))
    print("pair %d: step ms untraced %.3f traced %.3f (%.3f) no_c10d %.3f (%.3f) "
          "ops %.3f (%.3f); capture %s"
          % (p, u, t, t / u, n, n / u, o, o / u, capture))
ratio = statistics.median(r[1] / r[0] for r in rows)
no_c10d = statistics.median(r[2] / r[0] for r in rows)
ops = statistics.median(r[4] / r[0] for r in rows)
print(json.dumps({
    "bench": "torch", "pairs": pairs, "steps": steps,
    "untraced_step_ms": round(statistics.median(r[0] for r in rows), 3),
    "traced_step_ms": round(statistics.median(r[1] for r in rows), 3),
    "no_c10d_step_ms": round(statistics.median(r[2] for r in rows), 3),
    "ops_step_ms": round(statistics.median(r[4] for r in rows), 3),
    "traced_ratio": round(ratio, 4),
    "no_c10d_ratio": round(no_c10d, 4),
    "ops_ratio": round(ops, 4),
    "ratios": [round(r[1] / r[0], 4) for r in rows],
    "c10d_spans_rank0": rows[-1][3].get("recorded", 0),
    "target_traced_ratio": 1.03,
}))
PY
