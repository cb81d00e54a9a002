#!/usr/bin/env bash
# build_wheel.sh SOURCE OUTDIR: builds the `meridian` Python package at
# SOURCE (this directory) into a wheel, meridian-VERSION-py3-none-any.whl
# in OUTDIR, offline, without writing into SOURCE; and beside it its source
# archive, meridian-VERSION.tar.gz, which also carries the torch
# extension's C++ (csrc/: capture/torch/extension_build.py --files), for
# `pip install --no-binary meridian --no-build-isolation` to build the
# extension against the torch of the Python it installs into (setup.py).
#
# The wheel is pure Python, so any interpreter's pip (Debian's, a venv's,
# pyenv's, conda's) installs it without building anything: no setuptools in
# that interpreter. Building from the source tree there fails wherever
# Debian's patched setuptools wheel meets a non-Debian Python
# (`AttributeError: install_layout`), and setuptools writes build/ and
# *.egg-info into the tree it builds. So the build runs once, here, with
# Debian's own Python in a throwaway venv (python3-venv), from Debian's
# setuptools and wheel (python3-setuptools-whl, python3-wheel-whl), on a
# copy of SOURCE in a private temporary directory.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: build_wheel.sh SOURCE OUTDIR" >&2
  exit 2
fi
source_dir=$1
out_dir=$2
python=${MERIDIAN_WHEEL_PYTHON:-/usr/bin/python3}
wheels=/usr/share/python-wheels
[ -f "$source_dir/pyproject.toml" ] ||
  { echo "build_wheel.sh: no pyproject.toml in $source_dir" >&2; exit 1; }
[ -x "$python" ] ||
  { echo "build_wheel.sh: $python not found (Debian: python3)" >&2; exit 1; }
ls "$wheels"/setuptools-*.whl "$wheels"/wheel-*.whl >/dev/null 2>&1 ||
  { echo "build_wheel.sh: no setuptools and wheel wheels in $wheels" \
      "(Debian: python3-setuptools-whl python3-wheel-whl)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/meridian-wheel-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv" ||
  { echo "build_wheel.sh: $python -m venv failed (Debian: python3-venv)" >&2; exit 1; }
mkdir "$tmp/source" "$tmp/out"
cp -R "$source_dir/pyproject.toml" "$source_dir/setup.py" \
  "$source_dir/meridian_probe.py" "$source_dir/meridian" "$tmp/source/"
find "$tmp/source" -name __pycache__ -prune -exec rm -rf {} +
# PIP_* from the caller's environment (an index, find-links of its own)
# are not this build's: it reads Debian's wheels only.
env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL \
  PIP_CONFIG_FILE=/dev/null \
  "$tmp/venv/bin/pip" wheel --no-index --find-links "$wheels" --no-deps \
  --no-cache-dir --disable-pip-version-check --quiet \
  --wheel-dir "$tmp/out" "$tmp/source" >"$tmp/pip.log" 2>&1 ||
  { cat "$tmp/pip.log" >&2; echo "build_wheel.sh: pip wheel failed" >&2; exit 1; }
built=("$tmp"/out/meridian-*-py3-none-any.whl)
[ -f "${built[0]}" ] ||
  { echo "build_wheel.sh: pip wheel made no meridian wheel" >&2; exit 1; }
version=${built[0]##*/meridian-}
version=${version%%-py3-none-any.whl}

# The source archive: the same files and csrc/, laid out as in the tree.
top=$(cd "$source_dir/../../.." && pwd)
extension_build=$top/capture/torch/extension_build.py
[ -f "$extension_build" ] ||
  { echo "build_wheel.sh: no $extension_build" >&2; exit 1; }
archive=$tmp/sdist/meridian-$version
mkdir -p "$archive/csrc"
cp -R "$source_dir/pyproject.toml" "$source_dir/setup.py" \
  "$source_dir/meridian_probe.py" "$source_dir/meridian" "$archive/"
find "$archive" -name __pycache__ -prune -exec rm -rf {} +
"$python" "$extension_build" --files | while read -r file; do
  install -D -m 0644 "$top/$file" "$archive/csrc/$file"
done
tar -C "$tmp/sdist" --sort=name --owner=0 --group=0 --numeric-owner \
  --mtime=@0 -cf - "meridian-$version" | gzip -n >"$tmp/out/meridian-$version.tar.gz"

mkdir -p "$out_dir"
install -m 0644 "${built[0]}" "$tmp/out/meridian-$version.tar.gz" "$out_dir/"
echo "$out_dir/${built[0]##*/}"
