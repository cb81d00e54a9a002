#!/usr/bin/env bash
# Builds Meridian if needed and installs its programs under PREFIX/bin, its
# shared libraries under PREFIX/lib, and meridian's man pages and bash
# completion under PREFIX/share.
#
#   ./deploy/install.sh PREFIX        (e.g. /usr/local or ~/.local)
set -euo pipefail
if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,6p' "$0"
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
  //capture/nvtx/... //query/sql:libmeridian_sqlite.so >&2
bin=$(bazel info bazel-bin 2>/dev/null)
mkdir -p "$prefix/bin" "$prefix/lib"
for target in "${programs[@]}"; do
  path=${target#//}
  install -m 0755 "$bin/${path%%:*}/${path##*:}" "$prefix/bin/"
  echo "installed $prefix/bin/${path##*:}"
done
# meridian's bash completion and man pages, generated from its command line
# (cli/command_tree.h).
completions="$prefix/share/bash-completion/completions"
man1="$prefix/share/man/man1"
mkdir -p "$completions" "$man1"
"$bin/cli/meridian" completion bash >"$completions/meridian"
"$bin/cli/meridian" man --dir "$man1"
# The daemons' pages, from their --help (collector/collector_usage.cc,
# agent/agent_usage.cc) by help2man.
help2man --no-info --section 1 --output "$man1/meridian-collector.1" \
  --name "Meridian's collector: stores every node's spans, answers queries" \
  "$bin/collector/meridian-collector"
help2man --no-info --section 1 --output "$man1/meridian-agent.1" \
  --name "Meridian's node agent: reads the probes' rings, streams to the collector" \
  "$bin/agent/meridian-agent"
help2man --no-info --section 1 --output "$man1/meridian-synth.1" \
  --name "sends a synthetic multi-rank job to a collector, for tests and benchmarks" \
  "$bin/testing/meridian-synth"
echo "installed $completions/meridian and $man1/meridian*.1"
# The probe (`meridian run` finds it at PREFIX/lib) with its MPI family
# libraries, which it loads from its own directory, its C header and the
# Python binding.
for library in libmeridian_probe.so libmeridian_mpi_openmpi.so \
  libmeridian_mpi_mpich.so; do
  install -m 0755 "$bin/capture/probe/$library" "$prefix/lib/"
  echo "installed $prefix/lib/$library"
done
for library in capture/nccl/libnccl-profiler-meridian.so \
  capture/cupti/libmeridian_cuda.so capture/nvtx/libmeridian_nvtx.so; do
  if [ -f "$bin/$library" ]; then
    install -m 0755 "$bin/$library" "$prefix/lib/"
    echo "installed $prefix/lib/${library##*/}"
  else
    echo "not built (no CUDA toolkit): ${library##*/}"
  fi
done
# SQL over a store in any SQLite client (docs/sql.md): `.load
# PREFIX/lib/libmeridian_sqlite.so` in the sqlite3 shell.
install -m 0755 "$bin/query/sql/libmeridian_sqlite.so" "$prefix/lib/"
echo "installed $prefix/lib/libmeridian_sqlite.so"
mkdir -p "$prefix/include/meridian"
install -m 0644 capture/probe/include/meridian/probe.h "$prefix/include/meridian/"
echo "installed $prefix/include/meridian/probe.h"
# The Python package as a wheel, built here with Debian's Python and
# setuptools (capture/probe/python/build_wheel.sh): any venv's, conda's or
# pyenv's pip installs it without building anything or writing into the
# prefix (`pip install --no-index --find-links PREFIX/lib/meridian/python
# meridian`); its source archive beside it builds the torch extension for
# the venv's own torch (`pip install --no-binary meridian
# --no-build-isolation ...`, docs/torch.md). Its modules lie beside it too,
# for `meridian run`, which puts
# the directory on PYTHONPATH (meridian/ and meridian_probe.py). The copy
# older versions put in lib/python3/dist-packages, where no venv looks, is
# removed.
python_dir="$prefix/lib/meridian/python"
rm -rf "$python_dir"
install -d "$python_dir/meridian"
install -m 0644 capture/probe/python/meridian_probe.py "$python_dir/"
install -m 0644 capture/probe/python/meridian/*.py "$python_dir/meridian/"
wheel=$(capture/probe/python/build_wheel.sh capture/probe/python "$python_dir")
rm -f "$prefix/lib/python3/dist-packages/meridian_probe.py"
echo "installed $wheel: pip install --no-index --find-links $python_dir meridian"
echo "installed ${wheel%-py3-none-any.whl}.tar.gz (builds the torch extension for a venv's torch: docs/torch.md)"
# The torch.distributed capture (docs/torch.md): a torch extension, built
# with torch's own cpp_extension for Debian's torch (python3-torch,
# libtorch-dev), beside the package's modules, where `import meridian`
# finds it (from a venv's copy too, through the `meridian` on PATH).
if extension=$(/usr/bin/python3 capture/torch/build_extension.py "$python_dir" 2>"$python_dir/.torch-build.log"); then
  echo "installed $extension"
else
  echo "not built ($(tail -n 1 "$python_dir/.torch-build.log")): meridian/_torch_capture (torch.distributed capture)"
fi
rm -f "$python_dir/.torch-build.log"
