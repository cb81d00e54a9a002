#!/usr/bin/env bash
# The GPU tests: real CUDA, NVTX and NCCL capture on a machine with an
# NVIDIA GPU, its driver and the CUDA toolkit with NCCL (CUDA_HOME, else
# /usr/local/cuda). Not part of ./tests/run.sh: machines without a GPU run
# the same capture code there, driven by synthetic events.
#
#   ./tests/gpu/run.sh [--bench] [--dir DIR] [--prefix PREFIX]
#
# Builds Meridian (or, with --prefix, uses one installed there by
# deploy/install.sh or tests/gpu/bundle.sh: for a GPU machine without the
# build's packages) and tests/gpu/gpu_job.cu (nvcc; NCCL from NCCL_HOME,
# else the CUDA toolkit, else Python's nvidia-nccl package), starts a collector, runs
# gpu_job under `meridian run`, exports the merged trace and checks it
# (check_trace.py: kernels, copies by direction, memsets, syncs, NVTX
# ranges, launch -> GPU flows; NCCL executions with GPU time when 2 GPUs
# are visible). Where PyTorch is installed, also a torch.distributed NCCL
# training loop (torch_ddp.py under torchrun). --bench then runs
# bench/gpu_bench.sh. Exits 77 when there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=0
dir=gpu-test-out
prefix=
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=1 ;;
    --dir) dir="$2"; shift ;;
    --prefix) prefix="$2"; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "tests/gpu: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
cuda=${CUDA_HOME:-/usr/local/cuda}
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "tests/gpu: no NVIDIA GPU here: skipped" >&2
  exit 77
fi
nvidia-smi -L
gpus=$(nvidia-smi -L | wc -l)

if [ -n "$prefix" ]; then
  prefix=$(cd "$prefix" && pwd)
  collector_bin=$prefix/bin/meridian-collector
  cli_bin=$prefix/bin/meridian
else
  ./deploy/dependencies.sh
  bazel build //collector:meridian-collector //cli:meridian \
    //agent:meridian-agent //capture/probe:libmeridian_probe.so \
    //capture/cupti:libmeridian_cuda.so //capture/nvtx:libmeridian_nvtx.so \
    //capture/nccl:libnccl-profiler-meridian.so >&2
  bin=$(bazel info bazel-bin 2>/dev/null)
  collector_bin=$bin/collector/meridian-collector
  cli_bin=$bin/cli/meridian
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# The libraries a bundle carries (tests/gpu/bundle.sh) that this machine
# lacks, and only those: the traced programs load the machine's own.
if [ -n "$prefix" ] && [ -d "$prefix/lib/deps" ]; then
  rm -rf "$dir/deps"
  mkdir -p "$dir/deps"
  known=$(ldconfig -p | awk 'NR > 1 {print $1}')
  for library in "$prefix"/lib/deps/*; do
    grep -qxF "${library##*/}" <<<"$known" || ln -s "$library" "$dir/deps/"
  done
  echo "tests/gpu: from the bundle:" "$dir"/deps/* >&2
  export LD_LIBRARY_PATH="$dir/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# NCCL's header and library: NCCL_HOME, the CUDA toolkit, or the
# nvidia-nccl wheel that PyTorch installs.
nccl=${NCCL_HOME:-}
if [ -z "$nccl" ]; then
  if [ -f "$cuda/include/nccl.h" ]; then
    nccl=$cuda
  else
    nccl=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' \
      2>/dev/null || true)
  fi
fi
if [ -z "$nccl" ] || [ ! -f "$nccl/include/nccl.h" ]; then
  echo "tests/gpu: NCCL not found (set NCCL_HOME)" >&2
  exit 1
fi
[ -e "$nccl/lib/libnccl.so" ] || [ ! -e "$nccl/lib/libnccl.so.2" ] ||
  ln -sf libnccl.so.2 "$dir/libnccl.so"
export NCCL_HOME=$nccl
nvcc_nccl=(-I"$nccl/include" -L"$nccl/lib64" -L"$nccl/lib" -L"$dir" -lnccl
  -Xlinker -rpath -Xlinker "$nccl/lib64" -Xlinker -rpath -Xlinker "$nccl/lib")
"$cuda/bin/nvcc" -O2 -o "$dir/gpu_job" tests/gpu/gpu_job.cu \
  -I"$cuda/include" "${nvcc_nccl[@]}"

db="$dir/meridian.db"
rm -f "$db" "$db-wal" "$db-shm"
coproc COLLECTOR { exec "$collector_bin" --listen 127.0.0.1:0 --db "$db" 2>"$dir/collector.log"; }
trap 'kill -TERM $COLLECTOR_PID 2>/dev/null || true' EXIT
read -r line <&"${COLLECTOR[0]}"
address=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
meridian=("$cli_bin" --collector "$address")
export MERIDIAN_AGENT_SOCKET="$dir/agent.sock"
steps=20
nccl_flag=()
[ "$gpus" -ge 2 ] && nccl_flag=(--nccl)

echo "== meridian run -- gpu_job $steps ($gpus GPUs)" >&2
"${meridian[@]}" run --job gpu-job -- "$dir/gpu_job" "$steps"
"${meridian[@]}" stats --job gpu-job
"${meridian[@]}" export --job gpu-job -o "$dir/gpu-job.trace.json" >&2
python3 tests/gpu/check_trace.py "$dir/gpu-job.trace.json" "$steps" "${nccl_flag[@]}"

if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "== meridian run -- torchrun torch_ddp.py $steps" >&2
  "${meridian[@]}" run --job torch-ddp -- torchrun --standalone \
    --nproc_per_node=1 tests/gpu/torch_ddp.py "$steps"
  "${meridian[@]}" export --job torch-ddp -o "$dir/torch-ddp.trace.json" >&2
  python3 tests/gpu/check_trace.py "$dir/torch-ddp.trace.json" "$steps" --torch
else
  echo "== PyTorch with CUDA not installed: torch.distributed loop skipped" >&2
fi

if [ "$bench" -eq 1 ]; then
  MERIDIAN_COLLECTOR=$address MERIDIAN_CLI=$cli_bin ./bench/gpu_bench.sh "$dir"
fi
echo "tests/gpu: passed ($dir)"
