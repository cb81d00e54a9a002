#!/usr/bin/env bash
# Meridian's benchmarks. Each prints what it measured and, last, one JSON
# line with the figures (docs/PERFORMANCE.md records them).
#
#   ./bench/run.sh ingest [--spans N] [--dir DIR] [--store clickhouse [--rounds R]]
#                           [--jitter-ns N]
#                             (--store clickhouse: the SQLite and ClickHouse
#                              stores behind the collector, alternated)
#   ./bench/run.sh analysis [--spans N] [--dir DIR] [--batch SPANS]
#                           [--store sqlite|clickhouse] [--one-step] [--jitter-ns N]
#                             (critical path etc. against reading the spans)
#   ./bench/run.sh slowdown [--steps N]
#                             (fail-slow detection's cost a rank's step, on
#                              steady and on changing series)
#   ./bench/run.sh replay [--spans N] [--rounds R]
#                             (meridian replay of a 1M-span job against
#                              reading it, alternated over R rounds)
#   ./bench/run.sh web [--ranks N] [--steps S]
#                             (the collector's web page on a 1,024-rank,
#                              1,000-step job in headless Chromium: page
#                              load and interaction times)
#   ./bench/run.sh clocks [--spans N] [--nodes N] [--parts P] [--dir DIR]
#                             (a job's clocks kept up to date from its stored
#                              evidence as P parts arrive, against solving it
#                              whole each time)
#   ./bench/run.sh concurrent [--queries N] [--mib M] (N queries of each
#                              kind at once: the collector's peak memory
#                              against --analysis-memory-mib M)
#   ./bench/run.sh scale [--nodes "256 ... 4096"] [--spans N]
#                             (a job of more and more nodes, the same spans:
#                              export with raw and corrected clocks, clocks;
#                              and the first answers right after it is sent)
#   ./bench/run.sh big [--spans N] [--dir DIR]
#                             (a 100M-span job, built once under DIR, in a
#                              collector: its background refresh, then
#                              whole-job steps and stragglers, one step's
#                              critical path; the collector's memory)
#   ./bench/run.sh sql [--spans N] [--dir DIR] [--rounds R]
#                             (SQL over big's job with libmeridian_sqlite.so:
#                              a whole-job aggregate against Store::Scan,
#                              one rank's steps and the chunks it decoded)
#   ./bench/run.sh sql-clickhouse [--spans N] [--rounds R]
#                             (meridian sql on a ClickHouse collector, on a
#                              copy of the job, against a SQLite one)
#   ./bench/run.sh path [--spans N] [--ranks R] [--layers L] [--budget-mib M]
#                             (a whole job's critical path loaded whole
#                              against walked a block of steps at a time:
#                              time and the collector's memory, alternated)
#   ./bench/run.sh soak [--processes N] [--every N] [--warm N]
#                             (one agent through 100,000 short processes,
#                              each its own job and threads: its resident
#                              memory over time)
#   ./bench/run.sh ring       (the shared-memory ring's cost per record)
#   ./bench/run.sh probe [--collector PATH]
#                             (the probe's cost per recorded MPI call, and
#                              a traced 4-rank 8-byte MPI_Allreduce loop)
#   ./bench/run.sh colocated [--pairs N] [--steps N] [--rounds N]
#                           [--collector PATH]
#                             (collector, agent and job on one machine: the
#                              example's and an 8-byte MPI_Allreduce loop's
#                              slowdown, the pipeline's CPU and bytes a span)
#   ./bench/run.sh torch [--pairs N] [--steps N]
#                             (a real 2-rank PyTorch DDP job over gloo,
#                              traced against untraced, alternated: step
#                              time ratios)
#   ./bench/run.sh ended [--runs N] [--steps N] [--collector PATH]
#                             (how soon after a traced job's run returns
#                              the collector has its summaries and clocks)
#   ./bench/run.sh load [--agents N] [--batches N] [--spans N] [--memory-mib N]
#                             (N simulated agents, default 1000, against one
#                              collector under a memory cap: peak memory,
#                              ack latency, nothing lost)
#   ./bench/run.sh fuzz [--seconds N]
#                             (the libFuzzer targets, N s each, default 300:
#                              executions and findings)
#   ./bench/run.sh import [--events N] [--rounds R]
#                             (meridian import of a 1M-event Chrome trace:
#                              events/s; export as JSON and as Perfetto:
#                              bytes/s and sizes)
#   ./bench/run.sh health [--runs N]
#                             (how soon `meridian health` reports real hung
#                              MPI jobs and a rank that got slower: runs
#                              tests/health_test.sh alone, N times)
#   ./bench/run.sh gpu        (GPU machines only: CUDA + NCCL capture's
#                              overhead on small kernels and AllReduces,
#                              after the GPU tests; see tests/gpu/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  scale)
    shift
    ./deploy/dependencies.sh
    exec ./bench/scale_bench.sh "$@"
    ;;
  concurrent)
    shift
    ./deploy/dependencies.sh
    exec ./bench/concurrent_bench.sh "$@"
    ;;
  big)
    shift
    ./deploy/dependencies.sh
    exec ./bench/big_bench.sh "$@"
    ;;
  path)
    shift
    ./deploy/dependencies.sh
    exec ./bench/path_bench.sh "$@"
    ;;
  soak)
    shift
    ./deploy/dependencies.sh
    exec ./bench/soak_bench.sh "$@"
    ;;
  ingest)
    shift
    ./deploy/dependencies.sh
    bazel build //bench:ingest_bench >&2
    exec "$(bazel info bazel-bin 2>/dev/null)/bench/ingest_bench" "$@"
    ;;
  clocks)
    shift
    ./deploy/dependencies.sh
    bazel build //query/clocks:clock_update_bench >&2
    exec "$(bazel info bazel-bin 2>/dev/null)/query/clocks/clock_update_bench" "$@"
    ;;
  analysis)
    shift
    ./deploy/dependencies.sh
    bazel build //query/analysis:analysis_bench >&2
    exec "$(bazel info bazel-bin 2>/dev/null)/query/analysis/analysis_bench" "$@"
    ;;
  slowdown)
    shift
    ./deploy/dependencies.sh
    bazel build //query/analysis:slowdown_bench >&2
    exec "$(bazel info bazel-bin 2>/dev/null)/query/analysis/slowdown_bench" "$@"
    ;;
  replay)
    shift
    ./deploy/dependencies.sh
    bazel build //query/analysis:analysis_bench >&2
    exec "$(bazel info bazel-bin 2>/dev/null)/query/analysis/analysis_bench" \
      --replay "$@"
    ;;
  web)
    shift
    ./deploy/dependencies.sh
    bazel build //collector:meridian-collector //testing:meridian-synth >&2
    bin="$(bazel info bazel-bin 2>/dev/null)"
    exec /usr/bin/python3 bench/web_bench.py "$bin/collector/meridian-collector" \
      "$bin/testing/meridian-synth" "$@"
    ;;
  gpu)
    exec ./tests/gpu/run.sh --bench
    ;;
  health)
    shift
    ./deploy/dependencies.sh
    bazel build //tests:health_test >&2
    exec ./bench/health_bench.sh "$@"
    ;;
  load)
    shift
    ./deploy/dependencies.sh
    bazel build //bench:load_bench //collector:meridian-collector >&2
    bin="$(bazel info bazel-bin 2>/dev/null)"
    exec "$bin/bench/load_bench" --collector-bin "$bin/collector/meridian-collector" "$@"
    ;;
  fuzz)
    shift
    ./deploy/dependencies.sh
    [ $# -gt 0 ] || set -- --seconds 300
    exec ./tests/fuzz.sh "$@"
    ;;
  import)
    shift
    ./deploy/dependencies.sh
    bazel build //collector:meridian-collector //cli:meridian >&2
    exec ./bench/import_bench.sh "$@"
    ;;
  ring)
    ./deploy/dependencies.sh
    bazel build //capture/probe:ring_bench >&2
    exec "$(bazel info bazel-bin 2>/dev/null)/capture/probe/ring_bench"
    ;;
  probe)
    shift
    ./deploy/dependencies.sh
    bazel build //capture/probe:probe_bench //collector:meridian-collector \
      //agent:meridian-agent //cli:meridian \
      //capture/probe:libmeridian_probe.so >&2
    exec ./bench/probe_bench.sh "$@"
    ;;
  ended)
    shift
    ./deploy/dependencies.sh
    bazel build //examples:data_parallel //collector:meridian-collector \
      //agent:meridian-agent //cli:meridian \
      //capture/probe:libmeridian_probe.so >&2
    exec ./bench/ended_bench.sh "$@"
    ;;
  torch)
    shift
    ./deploy/dependencies.sh
    bazel build //collector:meridian-collector //agent:meridian-agent \
      //cli:meridian //capture/probe:libmeridian_probe.so >&2
    exec ./bench/torch_bench.sh "$@"
    ;;
  sql)
    shift
    ./deploy/dependencies.sh
    exec ./bench/sql_bench.sh "$@"
    ;;
  sql-clickhouse)
    shift
    ./deploy/dependencies.sh
    exec ./bench/sql_clickhouse_bench.sh "$@"
    ;;
  colocated)
    shift
    ./deploy/dependencies.sh
    bazel build //capture/probe:probe_bench //examples:data_parallel \
      //collector:meridian-collector //agent:meridian-agent //cli:meridian \
      //capture/probe:libmeridian_probe.so >&2
    exec ./bench/colocated_bench.sh "$@"
    ;;
  *)
    sed -n '2,25p' "$0" >&2
    echo "benchmarks: scale, big, sql, ingest, analysis, replay, slowdown, ring, probe, colocated, ended, load, fuzz, import, gpu" >&2
    exit 2
    ;;
esac
