#!/usr/bin/env bash
# Meridian's benchmarks. Each prints what it measured and, last, one JSON
# line with the figures (docs/PERFORMANCE.md records them).
#
#   ./bench/run.sh ingest [--spans N] [--dir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  ingest)
    shift
    ./deploy/dependencies.sh
    bazel build //bench:ingest_bench >&2
    exec "$(bazel info bazel-bin 2>/dev/null)/bench/ingest_bench" "$@"
    ;;
  *)
    sed -n '2,5p' "$0" >&2
    echo "benchmarks: ingest" >&2
    exit 2
    ;;
esac
