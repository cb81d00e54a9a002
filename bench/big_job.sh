# Sourced by the benches on big's job (big, sql): build_big_job DIR SPANS
# builds it once (`meridian-synth --store`: 256 ranks on 64 nodes, steps of
# 1,006 spans a rank, 500 "layer" spans in forward and in backward, 50 us
# of jitter) into DIR/big-SPANS.db and sets `built` (its path), `ranks`,
# `nodes` and `steps`. Needs `bin` (bazel-bin, with testing/meridian-synth).
build_big_job() {
  local dir=$1 spans=$2 layers=500 t
  ranks=256 nodes=64
  steps=$(( (spans + ranks * 1006 - 1) / (ranks * 1006) ))
  mkdir -p "$dir"
  built="$dir/big-$spans.db"
  if [ ! -e "$built.done" ]; then
    rm -f "$built"*
    t=$(date +%s%N)
    "$bin/testing/meridian-synth" --store "$built" --job big --ranks $ranks \
      --nodes $nodes --steps "$steps" --layers $layers --jitter-ns 50000 >&2
    echo "built $built in $(( ($(date +%s%N) - t) / 1000000000 )) s" >&2
    touch "$built.done"
  fi
}
