#!/usr/bin/env bash
# Builds Meridian if needed and installs its programs under PREFIX/bin and
# its shared libraries under PREFIX/lib.
#
#   ./deploy/install.sh PREFIX        (e.g. /usr/local or ~/.local)
set -euo pipefail
if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,5p' "$0"
  exit 2
fi
prefix=$1
cd "$(dirname "$0")/.."
./deploy/dependencies.sh
programs=(//collector:meridian-collector //cli:meridian //agent:meridian-agent
  //testing:meridian-synth)
# The GPU capture libraries: the NCCL plugin always; the CUPTI and NVTX
# injections where the CUDA toolkit is (the patterns skip them otherwise).
bazel build "${programs[@]}" //capture/probe:libmeridian_probe.so \
  //capture/nccl:libnccl-profiler-meridian.so //capture/cupti/... \
  //capture/nvtx/... >&2
bin=$(bazel info bazel-bin 2>/dev/null)
mkdir -p "$prefix/bin" "$prefix/lib"
for target in "${programs[@]}"; do
  path=${target#//}
  install -m 0755 "$bin/${path%%:*}/${path##*:}" "$prefix/bin/"
  echo "installed $prefix/bin/${path##*:}"
done
# The probe (`meridian run` finds it at PREFIX/lib), its C header and the
# Python binding.
install -m 0755 "$bin/capture/probe/libmeridian_probe.so" "$prefix/lib/"
echo "installed $prefix/lib/libmeridian_probe.so"
for library in capture/nccl/libnccl-profiler-meridian.so \
  capture/cupti/libmeridian_cuda.so capture/nvtx/libmeridian_nvtx.so; do
  if [ -f "$bin/$library" ]; then
    install -m 0755 "$bin/$library" "$prefix/lib/"
    echo "installed $prefix/lib/${library##*/}"
  else
    echo "not built (no CUDA toolkit): ${library##*/}"
  fi
done
mkdir -p "$prefix/include/meridian" "$prefix/lib/python3/dist-packages"
install -m 0644 capture/probe/include/meridian/probe.h "$prefix/include/meridian/"
install -m 0644 capture/probe/python/meridian_probe.py \
  "$prefix/lib/python3/dist-packages/"
echo "installed $prefix/include/meridian/probe.h and meridian_probe.py"
