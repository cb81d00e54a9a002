#!/usr/bin/env bash
# The overhead of Meridian's CUDA + NCCL (+ NVTX) capture on a loop of small
# kernels and small AllReduces (bench/gpu_overhead.cu), on a GPU machine:
# untraced runs, runs under CUPTI alone (bench/cupti_floor.cc: what
# Meridian enables, with nothing done with it) and traced runs (`meridian
# run`) take turns, 5 rounds (MERIDIAN_GPU_BENCH_ROUNDS: another count);
# prints each round and a JSON line with the
# medians, the slowdown, and the traced run against CUPTI alone. Called by
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
cupti_lib=$cuda/lib64
[ -e "$cupti_lib/libcupti.so" ] || cupti_lib=$cuda/extras/CUPTI/lib64
"${CXX:-g++}" -O2 -shared -fPIC -o "$dir/libcupti_floor.so" \
  bench/cupti_floor.cc -I"$cuda/include" -I"$cuda/extras/CUPTI/include" \
  -L"$cupti_lib" -lcupti -Wl,-rpath,"$cupti_lib"
per_iteration() { awk '/ns_per_iteration/ {print $2}'; }
untraced=()
cupti=()
traced=()
rounds=${MERIDIAN_GPU_BENCH_ROUNDS:-5}
for i in $(seq "$rounds"); do
  u=$("$dir/gpu_overhead" | per_iteration)
  c=$(CUDA_INJECTION64_PATH="$dir/libcupti_floor.so" "$dir/gpu_overhead" |
    per_iteration)
  t=$("$cli" run --job "gpu-bench-$i" -- "$dir/gpu_overhead" | per_iteration)
  echo "round $i: untraced $u, CUPTI alone $c, traced $t ns/iteration"
  untraced+=("$u")
  cupti+=("$c")
  traced+=("$t")
done
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
python3 -c "
import json, sys
u, c, t = map(int, sys.argv[1:])
print(json.dumps({'untraced_ns_per_iteration': u,
                  'cupti_alone_ns_per_iteration': c,
                  'traced_ns_per_iteration': t,
                  'slowdown': round(t / u - 1, 4),
                  'cupti_alone_slowdown': round(c / u - 1, 4),
                  'traced_over_cupti_alone': round(t / c, 4)}))" \
  "$(median "${untraced[@]}")" "$(median "${cupti[@]}")" \
  "$(median "${traced[@]}")"
