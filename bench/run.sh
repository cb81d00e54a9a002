#!/usr/bin/env bash
# Meridian's benchmarks. Each prints what it measured and, last, one JSON
# line with the figures (docs/PERFORMANCE.md records them).
#
#   ./bench/run.sh ingest [--spans N] [--dir DIR]
#   ./bench/run.sh ring       (the probe's cost per recorded event)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  ingest)
    shift
    ./deploy/dependencies.sh
    bazel build //bench:ingest_bench >&2
    exec "$(bazel info bazel-bin 2>/dev/null)/bench/ingest_bench" "$@"
    ;;
  ring)
    ./deploy/dependencies.sh
    bazel build //bench:ring_bench >&2
    exec "$(bazel info bazel-bin 2>/dev/null)/bench/ring_bench"
    ;;
  *)
    sed -n '2,6p' "$0" >&2
    echo "benchmarks: ingest, ring" >&2
    exit 2
    ;;
esac
