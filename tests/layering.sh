#!/usr/bin/env bash
# The floor plan, checked (docs/architecture.md): each folder's production
# targets (libraries and programs, not tests or *_bench benchmarks, which
# may use testing/ as tests do) may depend only on the folders
# listed for it, and nothing loaded into a traced process (capture/, abi/) may
# depend on absl, protobuf, gRPC or spdlog. Runs `bazel query`, so it is run
# by tests/run.sh rather than inside `bazel test`. Prints each violation as
# "FOLDER: TARGET depends on LABEL" and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."

# folder: the folders its production targets may use (besides itself). A
# folder named here that has subfolders named here too (query/) owns only
# the targets that none of them does; naming a folder allows its subfolders.
declare -A allowed=(
  [common]=""
  [abi]=""
  [capture]="abi common"
  [net]=""
  [wire]="net proto common"
  [agent]="abi net wire proto common"
  [store]="wire proto common"
  [query/ops]="store wire proto common"
  [query/clocks]="query/ops store wire proto common"
  [query/analysis]="query/clocks query/ops store wire proto common"
  [query/export]="query/analysis query/clocks query/ops store wire proto common"
  [query/sql]="query/analysis query/clocks query/ops store wire proto common"
  [query]="query/sql query/export query/analysis query/clocks query/ops store wire proto common"
  [web]="proto common"
  [collector]="web query store net wire proto common"
  [import]="wire proto common"
  [cli]="query import net wire abi proto common"
)

# The folder of allowed[] that owns package $1: the longest one that is
# it or contains it, else its top folder.
owner() {
  local pkg=$1 best=${1%%/*} f
  for f in "${!allowed[@]}"; do
    if [ "$pkg" = "$f" ] || [[ "$pkg" == "$f/"* ]]; then
      [ ${#f} -gt ${#best} ] && best=$f
    fi
  done
  echo "$best"
}
# Always allowed: system libraries wrapped in third_party/, except these
# for the in-process folder.
in_process_banned="//third_party:absl //third_party:grpc //third_party:spdlog //third_party:protobuf"

violations=0
for folder in "${!allowed[@]}"; do
  scope="//$folder/..."
  for sub in "${!allowed[@]}"; do
    [[ "$sub" == "$folder/"* ]] && scope="$scope - //$sub/..."
  done
  targets=$(bazel query --noshow_progress \
    "kind('cc_library|cc_binary|cc_shared_library', $scope) except attr(name, '_bench$', $scope)" 2>/dev/null)
  [ -n "$targets" ] || continue
  deps=$(bazel query --noshow_progress \
    "kind(rule, deps(set($(echo $targets))))" 2>/dev/null | grep '^//' || true)
  for dep in $deps; do
    pkg=${dep#//}
    pkg=${pkg%%:*}
    top=${pkg%%/*}
    unit=$(owner "$pkg")
    [ "$unit" = "$folder" ] && continue
    [ "$top" = third_party ] && {
      if { [ "$folder" = capture ] || [ "$folder" = abi ]; } &&
        [[ " $in_process_banned " == *" ${dep} "* ]]; then
        echo "$folder: depends on $dep (loaded into traced processes: no absl, protobuf, gRPC or spdlog)"
        violations=$((violations + 1))
      fi
      continue
    }
    ok=0
    for a in ${allowed[$folder]}; do
      if [ "$unit" = "$a" ] || [[ "$unit" == "$a/"* ]]; then ok=1; fi
    done
    if [ "$ok" = 0 ]; then
      who=$(bazel query --noshow_progress \
        "rdeps(set($(echo $targets)), $dep, 1) intersect set($(echo $targets))" 2>/dev/null | head -3 | tr '\n' ' ')
      echo "$folder: ${who}depends on $dep ($unit/ is not among: ${allowed[$folder]:-nothing})"
      violations=$((violations + 1))
    fi
  done
done
if [ "$violations" -gt 0 ]; then
  echo "layering: $violations dependencies break the floor plan (docs/architecture.md)" >&2
  exit 1
fi
echo "layering: every folder depends only on the folders below it"
