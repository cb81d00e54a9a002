#!/usr/bin/env bash
# Builds Meridian and installs it under DIR (deploy/install.sh) with the
# shared libraries its programs and libraries load beyond the C and C++
# runtimes (gRPC, protobuf, Abseil, SQLite, Open MPI, ...) in DIR/lib/deps:
# a copy to run ./tests/gpu/run.sh --prefix DIR on a GPU machine that has
# the CUDA toolkit but not this build's packages (same architecture, glibc
# 2.36 or newer). run.sh puts DIR/lib/deps on LD_LIBRARY_PATH.
#
#   ./tests/gpu/bundle.sh DIR
set -euo pipefail
if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,9p' "$0"
  exit 2
fi
cd "$(dirname "$0")/../.."
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
./deploy/install.sh "$prefix" >&2
mkdir -p "$prefix/lib/deps"
# The runtimes every Linux machine has, and the CUDA libraries the GPU
# machine brings itself.
base='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libgcc_s|libstdc\+\+|libcupti|libcuda|libnccl)\.'
for file in "$prefix"/bin/* "$prefix"/lib/*.so; do
  ldd "$file" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! grep -qE "$base" <<<"$name"; then
    cp -L "$path" "$prefix/lib/deps/$name"
  fi
done
echo "bundled $(find "$prefix/lib/deps" -type f | wc -l) libraries in $prefix/lib/deps" \
  "($(du -sh "$prefix" | cut -f1) in all)"
