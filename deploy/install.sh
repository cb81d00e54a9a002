#!/usr/bin/env bash
# Builds Meridian if needed and installs its programs under PREFIX/bin and
# its shared libraries under PREFIX/lib.
#
#   ./deploy/install.sh PREFIX        (e.g. /usr/local or ~/.local)
set -euo pipefail
if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,5p' "$0"
  exit 2
fi
prefix=$1
cd "$(dirname "$0")/.."
./deploy/dependencies.sh
programs=(//collector:meridian-collector //query:meridian //agent:meridian-synth)
bazel build "${programs[@]}" >&2
bin=$(bazel info bazel-bin 2>/dev/null)
mkdir -p "$prefix/bin" "$prefix/lib"
for target in "${programs[@]}"; do
  path=${target#//}
  install -m 0755 "$bin/${path%%:*}/${path##*:}" "$prefix/bin/"
  echo "installed $prefix/bin/${path##*:}"
done
# Shared libraries (the in-process probe) arrive with agent capture; until
# then PREFIX/lib is created empty.
