#!/usr/bin/env bash
# The overhead of Meridian's CUDA + NCCL (+ NVTX) capture on a loop of small
# kernels and small AllReduces (bench/gpu_overhead.cu), on a GPU machine:
# untraced and traced (`meridian run`) runs alternate, 3 of each; prints
# each run and a JSON line with the medians and the slowdown. Called by
# ./tests/gpu/run.sh --bench, which builds Meridian and starts a collector
# first; standalone: ./bench/gpu_bench.sh DIR with MERIDIAN_COLLECTOR set
# (MERIDIAN_CLI: the meridian program, else the build's; NCCL_HOME: NCCL's
# header and library, else the CUDA toolkit's).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/gpu_bench.sh DIR}
cuda=${CUDA_HOME:-/usr/local/cuda}
cli=${MERIDIAN_CLI:-$(bazel info bazel-bin 2>/dev/null)/cli/meridian}
nccl=${NCCL_HOME:-$cuda}
"$cuda/bin/nvcc" -O2 -o "$dir/gpu_overhead" bench/gpu_overhead.cu \
  -I"$cuda/include" -I"$nccl/include" -L"$nccl/lib64" -L"$nccl/lib" -L"$dir" \
  -lnccl -Xlinker -rpath -Xlinker "$nccl/lib64" -Xlinker -rpath \
  -Xlinker "$nccl/lib"
untraced=()
traced=()
for i in 1 2 3; do
  u=$("$dir/gpu_overhead" | awk '/ns_per_iteration/ {print $2}')
  t=$("$cli" run --job "gpu-bench-$i" -- "$dir/gpu_overhead" |
    awk '/ns_per_iteration/ {print $2}')
  echo "run $i: untraced $u ns/iteration, traced $t ns/iteration"
  untraced+=("$u")
  traced+=("$t")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
u=$(median "${untraced[@]}")
t=$(median "${traced[@]}")
python3 -c "import json,sys; u,t=int(sys.argv[1]),int(sys.argv[2]); print(json.dumps({'untraced_ns_per_iteration':u,'traced_ns_per_iteration':t,'slowdown':round(t/u-1,4)}))" "$u" "$t"
