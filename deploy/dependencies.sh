#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages Meridian builds and runs
# with, skipping those already installed. The build itself is offline (see
# WORKSPACE); only --tests downloads one thing more (below).
#
#   deploy/dependencies.sh [--tests]
#
# --tests (tests/run.sh) also installs a current ClickHouse's engine for
# tests/clickhouse_current.sh: chDB's libchdb.so (ClickHouse 26.7), from the
# npm registry, checked against its SHA-256, into /opt/meridian.
set -euo pipefail

tests=0
[ "${1:-}" = "--tests" ] && tests=1

packages=(
  bazel-bootstrap bazel-rules-java g++ python3
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libsqlite3-dev libzstd-dev libgtest-dev libgmock-dev
  libopenmpi-dev openmpi-bin gfortran
  gdb  # mpirun --get-stack-traces: a test's hung MPI job shows every rank's stack
  # MPICH beside Open MPI: the probe's MPICH-family wrappers build against its
  # mpi.h, tests/mpi_capture_*_test.cc run MPICH jobs. Debian's alternatives
  # keep mpirun/mpicc/mpif90 Open MPI's (its priority is higher); tests name
  # each MPI's own programs (mpirun.openmpi, mpiexec.mpich).
  libmpich-dev mpich
  util-linux  # setpriv: tests/shared_node_test.sh acts as two users
  # tests/deploy_files_test.sh: systemd-analyze verify on the units, shellcheck
  # on the Slurm scripts, python3-yaml for the Kubernetes manifests (kubectl,
  # not a Debian package, is used where installed).
  systemd shellcheck python3-yaml
  # tests/fuzz.sh: libFuzzer targets built with clang (libclang-rt-14-dev holds
  # libFuzzer and the sanitizers' runtimes), linked against pkg-config's flags.
  clang libclang-rt-14-dev pkg-config
  clang-format-14  # tests/run.sh checks the C++ format (Google style, .clang-format)
  prometheus-cpp-dev  # the daemons' --metrics endpoints
  libsimdjson-dev zlib1g-dev  # meridian import: JSON traces, .gz files
  python3-venv  # install.sh builds the Python wheel in a venv; tests install it in venvs
  python3-setuptools-whl python3-wheel-whl  # ... offline: setuptools builds the wheel
  libcli11-dev  # the meridian command line's parser (header only)
  help2man  # install.sh: the daemons' man pages, from their --help
  libdw-dev  # the agent names MPI call sites (elfutils' libdw)
  libcivetweb-dev  # prometheus-cpp's HTTP server (the metrics endpoints)
  libmicrohttpd-dev  # the collector's web page (--http)
  # tests/web_test.py: the web page in headless Chromium, driven over the
  # DevTools protocol (python3-websocket, with Debian's /usr/bin/python3).
  chromium python3-websocket
  # The ClickHouse store (issue 22): its HTTP client, and a real server for
  # its tests (Debian's ClickHouse 18.16, started by the tests on free ports).
  libcurl4-openssl-dev clickhouse-server
  # torch.distributed capture (capture/torch, docs/torch.md): Debian's
  # PyTorch 1.13 (CPU, gloo) and its C++ headers; the extension is built
  # with torch's cpp_extension, which needs pybind11's and Python's headers.
  python3-torch libtorch-dev pybind11-dev python3-dev
  # SQL over the store (docs/sql.md): the sqlite3 shell that loads
  # libmeridian_sqlite.so; tests/sql_test.sh traces an mpi4py job.
  sqlite3 python3-mpi4py
)

# A current ClickHouse for the tests (not a Debian package; Debian 12 ships
# 18.16): chDB's build of ClickHouse 26.7 as one library.
chdb_version=26.7.3-stable.1
chdb_sha256=c0d32b129e988f2b9a9a31c9141aecf5e1e2453f9a079efc4d36ab8e3f92b2ad
chdb_dir=/opt/meridian/chdb-$chdb_version
[ "$tests" -eq 1 ] && ! command -v npm >/dev/null && packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "meridian: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >&2
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# Without the registry the tests still run: tests/clickhouse_current.sh
# then says it was skipped, and why.
if [ "$tests" -eq 1 ] && [ ! -f "$chdb_dir/libchdb.so" ]; then
  echo "meridian: installing chDB $chdb_version (ClickHouse 26.7) into $chdb_dir" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  tgz="$work/chdb-lib-linux-x64-gnu-$chdb_version.tgz"
  if (cd "$work" && npm pack --silent "@chdb/lib-linux-x64-gnu@$chdb_version" >/dev/null) &&
    echo "$chdb_sha256  $tgz" | sha256sum -c --quiet &&
    tar -xzf "$tgz" -C "$work" package/libchdb.so; then
    $sudo install -D -m 0644 "$work/package/libchdb.so" "$chdb_dir/libchdb.so"
  else
    echo "meridian: could not install chDB $chdb_version from the npm registry" \
      "(or its SHA-256 differs): the ClickHouse 26.7 tests will be skipped" >&2
  fi
fi
