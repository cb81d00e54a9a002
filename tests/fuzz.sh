#!/usr/bin/env bash
# The libFuzzer targets, built with clang (-fsanitize=fuzzer,address,
# undefined) outside bazel, each run for a bounded time on a copy of its
# checked-in corpus (fuzz/corpus/NAME/). Prints each target's executions
# and findings, then a JSON line; exits 1 if any target found a crash
# (the input is kept under $OUT, default a temporary directory).
#
#   tests/fuzz.sh [--seconds N] [--grow]   (N per target, default 10;
#                                            --grow adds new inputs to
#                                            fuzz/corpus/)
# Targets: span_chunk (the chunk decoder), batch_validator (any bytes as a
# Batch), batch_shape (any bytes counted before parsing), process_region
# (any bytes as a process's shared region),
# agent_protocol (any bytes as a client's message to the agent),
# probe_args (any bytes as a span's "key=value;..." arguments), python_dump
# (any bytes as a faulthandler dump a traced process wrote), node_counters
# (any bytes as /proc/stat, /proc/meminfo or a sysfs counter), spool (any
# bytes as a spool file), chrome_trace (any bytes as a JSON trace for
# meridian import), framework_timeline (any bytes as a Horovod, BytePS and
# Bluefog timeline), nsight_sqlite (any bytes as an Nsight Systems SQLite
# export), mpitrace_profile (any bytes as an mpitrace text profile),
# chunk_rows (any bytes as a ClickHouse store's scan result, merged).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=10
grow=
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --grow) grow=1; shift ;;
    *) sed -n '2,13p' "$0" >&2; exit 2 ;;
  esac
done
command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (deploy/dependencies.sh installs clang)" >&2; exit 1; }
# The generated protobuf code comes from bazel.
bazel build //proto:generate >&2
proto="$(bazel info bazel-bin 2>/dev/null)/proto"
out=${OUT:-$(mktemp -d /tmp/meridian-fuzz-XXXXXX)}
mkdir -p "$out"
libs="$(pkg-config --libs absl_status absl_statusor absl_strings absl_str_format absl_synchronization absl_hash absl_raw_hash_set protobuf libzstd simdjson sqlite3 libdw)"
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined
  -fno-sanitize-recover=undefined -I. -I"$proto")

declare -A sources=(
  [span_chunk]="wire/span_chunk_fuzz.cc wire/span_chunk.cc"
  [batch_validator]="wire/batch_validator_fuzz.cc wire/batch_validator.cc wire/span_rules.cc wire/span_chunk.cc common/utf8.cc $proto/meridian/v1/span.pb.cc"
  [batch_shape]="wire/batch_shape_fuzz.cc wire/batch_shape.cc $proto/meridian/v1/span.pb.cc"
  [process_region]="abi/process_region_fuzz.cc abi/process_region.cc abi/span_ring.cc abi/in_flight.cc"
  [agent_protocol]="abi/agent_protocol_fuzz.cc abi/agent_protocol.cc abi/agent_dir.cc"
  [probe_args]="agent/probe_args_fuzz.cc agent/probe_args.cc common/utf8.cc"
  [callsite]="agent/callsite_symbolizer_fuzz.cc agent/callsite_symbolizer.cc"
  [python_dump]="agent/python_dump_fuzz.cc agent/python_stacks.cc common/utf8.cc"
  [node_counters]="agent/node_counters_fuzz.cc agent/node_counters.cc"
  [chrome_trace]="import/chrome_trace_fuzz.cc import/chrome_trace_reader.cc import/chrome_trace_events.cc import/paths.cc import/micros.cc common/utf8.cc"
  [framework_timeline]="import/framework_timeline_fuzz.cc import/horovod_timeline_reader.cc import/byteps_trace_reader.cc import/bluefog_timeline_reader.cc import/timeline_events.cc import/timeline_format.cc import/time_base.cc import/framework_ops.cc import/paths.cc import/micros.cc common/utf8.cc"
  [nsight_sqlite]="import/nsight_sqlite_fuzz.cc import/nsight_sqlite_reader.cc import/stranger_sqlite.cc import/nsight_schema.cc import/paths.cc common/utf8.cc"
  [mpitrace_profile]="import/mpitrace_profile_fuzz.cc import/mpitrace_profile_reader.cc"
  [chunk_rows]="store/chunk_rows_fuzz.cc store/chunk_rows.cc store/chunk_merge.cc store/row_binary.cc wire/span_chunk.cc $proto/meridian/v1/span.pb.cc"
  [spool]="agent/spool_fuzz.cc agent/spool.cc abi/agent_dir.cc common/crc32c.cc wire/batch_spans.cc wire/span_chunk.cc $proto/meridian/v1/span.pb.cc"
)
json=""
failed=0
for name in span_chunk batch_validator batch_shape process_region agent_protocol probe_args callsite python_dump node_counters spool chrome_trace framework_timeline nsight_sqlite mpitrace_profile chunk_rows; do
  # shellcheck disable=SC2086
  clang++ "${flags[@]}" ${sources[$name]} $libs -o "$out/$name"
  corpus="$out/corpus-$name"
  mkdir -p "$corpus"
  seeds=$name
  [ "$name" = batch_shape ] && seeds=batch_validator  # batches, too
  [ -d "fuzz/corpus/$seeds" ] && cp "fuzz/corpus/$seeds"/* "$corpus/" 2>/dev/null || true
  log="$out/$name.log"
  status=0
  (cd "$out" && "./$name" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 "$corpus" >"$log" 2>&1) || status=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  crashes=$(find "$out" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' -o -maxdepth 1 -name 'timeout-*' | wc -l)
  if [ "$status" -ne 0 ]; then
    failed=1
    echo "fuzz: $name FOUND A PROBLEM (exit $status); see $log and $out/crash-*" >&2
    tail -30 "$log" >&2
  fi
  echo "fuzz: $name: $runs executions in ${seconds} s, exit $status"
  [ -n "$grow" ] && cp -n "$corpus"/* "fuzz/corpus/$name/" 2>/dev/null || true
  json="$json${json:+, }\"$name\": {\"executions\": $runs, \"seconds\": $seconds, \"findings\": $([ "$status" -eq 0 ] && echo 0 || echo "$crashes")}"
done
[ -n "${OUT:-}" ] || [ "$failed" -ne 0 ] || rm -rf "$out"
echo "{\"bench\": \"fuzz\", \"targets\": {$json}}"
exit $failed
