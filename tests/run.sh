#!/usr/bin/env bash
# Every Meridian test: installs what is missing, builds, runs `bazel test //...`
# (unit tests beside the code, the integration test and the CLI test under
# tests/), tests/layering.sh (the folders' dependencies),
# tests/shared_node_test.sh (two users on one node),
# tests/deploy_files_test.sh (the service files under deploy/),
# tests/installed_test.sh (an installed prefix, used as the docs say),
# tests/clickhouse_current.sh (the ClickHouse tests on ClickHouse 26.7) and
# tests/fuzz.sh (the libFuzzer targets, 10 s each), and ends with
# a "N passed, N failed" line. Tests that need the CUDA toolkit are skipped
# without one (and counted as skipped); tests that need a GPU are in
# tests/gpu/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/dependencies.sh --tests

cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cupti.h" ] || [ ! -f "$cuda/include/nvtx3/nvToolsExt.h" ]; then
  echo "tests: no CUDA toolkit with CUPTI and NVTX at $cuda (set CUDA_HOME):" \
    "the CUPTI and NVTX capture targets are skipped" >&2
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
bazel test //... 2>&1 | tee "$log" || status=$?
total=$(grep -oE 'Executed [0-9]+ out of ([0-9]+) tests?' "$log" | grep -oE '[0-9]+ tests?$' | grep -oE '[0-9]+' || echo 0)
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)' "$log" || true)
# The floor plan (folders depend only on those below them), by bazel query.
total=$((total + 1))
if ! ./tests/layering.sh; then
  failed=$((failed + 1))
  status=1
fi
# The code's shape (issue 49): clang-format's Google style on every C++
# file of ours, and no production file over 800 lines, function over 100
# or include guard not naming its path (tests/code_shape.py; what broke a
# rule before it came is listed there, to shrink).
total=$((total + 1))
if ! git ls-files '*.cc' '*.h' | grep -v '^third_party/' |
  xargs clang-format-14 --dry-run --Werror; then
  echo "tests: clang-format-14 -i the files above" >&2
  failed=$((failed + 1))
  status=1
fi
total=$((total + 1))
if ! python3 ./tests/code_shape.py; then
  failed=$((failed + 1))
  status=1
fi
# ThreadSanitizer over what shares memory between threads and processes
# without a lock: the rings, the handle table, the process region and the
# agent's reading of them, the torch capture's ring of operations (.bazelrc says why only these: Debian's Abseil is
# not built with it, so an absl::Mutex's ordering is invisible to it).
total=$((total + 1))
if ! bazel test --config=tsan //abi:span_ring_test \
  //capture/probe:handle_table_test //abi:process_region_test \
  //agent:probe_session_test //capture/torch:c10d_recorder_test; then
  failed=$((failed + 1))
  status=1
fi
# A second user on the node cannot subvert the agent: as two users, so
# outside bazel's sandbox (docs/security.md).
total=$((total + 1))
if ! ./tests/shared_node_test.sh; then
  failed=$((failed + 1))
  status=1
fi
# The deployment files (deploy/systemd, deploy/slurm, deploy/kubernetes),
# checked without a cluster, with the agent bazel built above.
total=$((total + 1))
if ! ./tests/deploy_files_test.sh; then
  failed=$((failed + 1))
  status=1
fi
# As a new user has it: deploy/install.sh into a fresh prefix, the Python
# wheel into venvs, a C program built against the prefix, the man pages
# (outside bazel: install.sh runs bazel).
total=$((total + 1))
if ! ./tests/installed_test.sh; then
  failed=$((failed + 1))
  status=1
fi
# The ClickHouse store's tests again on a current ClickHouse (26.7, chDB's
# engine): `bazel test //...` ran them on Debian's 18.16.
total=$((total + 1))
current=0
./tests/clickhouse_current.sh || current=$?
if [ "$current" -eq 77 ]; then
  extra_skipped=1
elif [ "$current" -ne 0 ]; then
  failed=$((failed + 1))
  status=1
fi
# The libFuzzer targets (clang, outside bazel), 10 s each on their corpus;
# ./bench/run.sh fuzz runs them longer.
total=$((total + 1))
if ! ./tests/fuzz.sh --seconds 10; then
  failed=$((failed + 1))
  status=1
fi
skipped=$(grep -cE '^//[^ ]+ +SKIPPED' "$log" || true)
skipped=$((skipped + ${extra_skipped:-0}))
if [ "$skipped" -gt 0 ]; then
  echo "$((total - failed - skipped)) passed, ${failed} failed, ${skipped} skipped (no CUDA toolkit, or no ClickHouse 26.7)"
else
  echo "$((total - failed)) passed, ${failed} failed"
fi
exit $status
