#!/usr/bin/env bash
# Meridian as a new user has it: deploy/install.sh into a fresh prefix, then
# only what README.md and docs/ say to do with that prefix, checked by what
# comes back.
#   1. The Python package: `pip install --no-index --find-links
#      PREFIX/lib/meridian/python meridian` into a venv of Debian's Python
#      and of a pyenv Python (where one is), importing the installed copy,
#      and nothing written into the prefix.
#   2. A C program annotated with the C API (examples/annotated.c), built
#      against PREFIX/include and PREFIX/lib both ways docs/agent.md gives
#      (linked with an rpath; MERIDIAN_PROBE_OPTIONAL without linking), run
#      untraced and under PREFIX/bin/meridian run: exact spans exported.
#   2a. The same job's spans read with SQL: the sqlite3 shell with
#      PREFIX/lib/libmeridian_sqlite.so loaded.
#   2b/2c. torch.distributed through the extension install.sh built, and
#      through the one pip builds from the source archive.
#   3. The man pages of meridian and of both daemons.
# Outside bazel (install.sh runs bazel itself); tests/run.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d /tmp/meridian-installed-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "installed_test: FAIL: $*" >&2; exit 1; }

prefix="$work/prefix"
./deploy/install.sh "$prefix" >"$work/install.log" 2>&1 ||
  { tail -30 "$work/install.log" >&2; fail "deploy/install.sh $prefix"; }
listing() { (cd "$prefix" && find . -printf '%p %s %T@\n' | sort); }
before=$(listing)

# 1. The Python package, as README.md installs it.
pip_install() {  # pip_install PYTHON: the documented command
  env -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null "$1" -m pip install \
    --no-index --find-links "$prefix/lib/meridian/python" meridian \
    >"$work/pip.log" 2>&1 || { cat "$work/pip.log" >&2; fail "pip install with $1"; }
}
venv_imports() {  # venv_imports BASE_PYTHON NAME
  "$1" -m venv "$work/$2" || fail "$1 -m venv"
  pip_install "$work/$2/bin/python"
  local site got
  site=$("$work/$2/bin/python" -I -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  got=$(env -u PYTHONPATH "$work/$2/bin/python" -I -c 'import meridian; print(meridian.__file__)')
  [ "$got" = "$site/meridian/__init__.py" ] || fail "$2 imports meridian from $got"
}
venv_imports /usr/bin/python3 debian-venv
pythons=0
pyenv_root=${PYENV_ROOT:-$(getent passwd "$(id -u)" | cut -d: -f6)/.pyenv}
for candidate in "$pyenv_root"/versions/3.*/bin/python3; do
  [ -x "$candidate" ] || continue
  "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 8))' || continue
  pythons=$((pythons + 1))
  venv_imports "$candidate" "pyenv-venv-$pythons"
done
echo "installed_test: the wheel installed into Debian's Python and $pythons pyenv Pythons"

# 2. The C API, both ways.
cc=${CC:-cc}
"$cc" -Wall -Werror -I "$prefix/include" examples/annotated.c -o "$work/linked" \
  -L "$prefix/lib" -lmeridian_probe -Wl,-rpath,"$prefix/lib" ||
  fail "the linked build docs/agent.md gives"
"$cc" -Wall -Werror -DMERIDIAN_PROBE_OPTIONAL -I "$prefix/include" \
  examples/annotated.c -o "$work/optional" || fail "the optional build docs/agent.md gives"
if nm -D --undefined-only "$work/optional" | grep -q ' U meridian_'; then
  fail "the optional build needs the probe: $(nm -D "$work/optional" | grep meridian_)"
fi
# Untraced: each runs and records nothing (no agent).
for program in linked optional; do
  [ "$(env -u MERIDIAN_AGENT_SOCKET -u LD_PRELOAD "$work/$program")" = "3 steps, loss 0.125" ] ||
    fail "$program untraced"
done

# start NAME CMD...: CMD in the background, its first output line in $line.
start() {
  local name=$1
  shift
  mkfifo "$work/$name.fifo"
  "$@" >"$work/$name.fifo" 2>"$work/$name.log" &
  pids+=("$!")
  exec {fd}<"$work/$name.fifo"
  read -r line <&"$fd" || fail "$name did not start: $(cat "$work/$name.log")"
}
start collector "$prefix/bin/meridian-collector" --listen 127.0.0.1:0 --db "$work/m.db"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
meridian=("$prefix/bin/meridian" --collector "$addr")
export MERIDIAN_AGENT_SOCKET="$work/agent.sock"
for program in linked optional; do
  "${meridian[@]}" run --job "c-$program" -- "$work/$program" >"$work/$program.out" 2>&1 ||
    { cat "$work/$program.out" >&2; fail "meridian run -- $program"; }
  "${meridian[@]}" export --job "c-$program" -o "$work/$program.json" >/dev/null
  python3 - "$work/$program.json" >"$work/$program.spans" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
for e in sorted((e for e in events if e["ph"] in ("X", "C")
                 and not e["name"].startswith("rusage.")),
                key=lambda e: (e["ts"], e["name"])):
    args = e.get("args", {})
    value = "%g" % args[e["name"]] if e["ph"] == "C" else ""
    print(e["ph"], e["name"], args.get("step", "-"), value)
PY
  diff -u - "$work/$program.spans" <<'EOF' >&2 || fail "$program's spans"
X step 0 
X compute 0 
C loss 0 0.5
X step 1 
X compute 1 
C loss 1 0.25
X step 2 
X compute 2 
C loss 2 0.125
EOF
done
echo "installed_test: examples/annotated.c built both ways against the prefix, traced"
# The same job read with SQL (docs/sql.md): the installed extension in the
# sqlite3 shell, on the collector's store while it runs.
got=$(sqlite3 -readonly "$work/m.db" ".load $prefix/lib/libmeridian_sqlite.so" \
  "SELECT group_concat(name || ' ' || step, ', ') FROM (SELECT name, step FROM spans
   WHERE job = 'c-linked' AND name IN ('step', 'compute') ORDER BY step, name)" \
  "SELECT group_concat(value, ' ') FROM (SELECT value FROM counters
   WHERE job = 'c-linked' AND name = 'loss' ORDER BY time_ns)") ||
  fail "sqlite3 with PREFIX/lib/libmeridian_sqlite.so"
[ "$got" = "compute 0, step 0, compute 1, step 1, compute 2, step 2
0.5 0.25 0.125" ] || fail "SQL over c-linked gave: $got"
echo "installed_test: PREFIX/lib/libmeridian_sqlite.so read the job in the sqlite3 shell"

# 2b. torch.distributed from Debian's torch, captured with the extension
# install.sh built: a one-rank gloo job's all_reduce of 1,000 floats, run
# by the prefix's copy of the package (meridian run's PYTHONPATH) and by a
# venv's (-I: only the venv's copy, which finds the extension through the
# `meridian` on PATH).
ls "$prefix"/lib/meridian/python/meridian/_torch_capture*.so >/dev/null 2>&1 ||
  fail "install.sh built no torch extension: $(grep -i torch "$work/install.log")"
/usr/bin/python3 -m venv --system-site-packages "$work/torch-venv" || fail "venv for torch"
pip_install "$work/torch-venv/bin/python"
cat >"$work/allreduce.py" <<'PY'
import meridian
import torch
import torch.distributed as dist
dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
dist.all_reduce(torch.ones(1000))
dist.destroy_process_group()
PY
for python in "/usr/bin/python3" "$work/torch-venv/bin/python -I"; do
  job="torch-$(basename "${python%% *}")"
  # shellcheck disable=SC2086 # $python is a command and its flag
  PATH="$prefix/bin:$PATH" "${meridian[@]}" run --job "$job" -- $python "$work/allreduce.py" \
    >"$work/$job.out" 2>&1 || { cat "$work/$job.out" >&2; fail "$job"; }
  "${meridian[@]}" export --job "$job" -o "$work/$job.json" >/dev/null
  python3 - "$work/$job.json" <<'PY' || { cat "$work/$job.out" >&2; fail "$job's allreduce"; }
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
spans = [(e["name"], e["args"]["bytes"], e["args"]["backend"]) for e in events
         if e.get("cat") == "c10d"]
assert spans == [("allreduce", 4000, "gloo")], spans
PY
done
echo "installed_test: torch.distributed recorded through the installed extension"

# 2c. The extension built by pip for the torch of the venv it installs into
# (docs/torch.md): the source archive beside the wheel, built with that
# venv's torch, records the same all_reduce from the venv's own copy; with
# no compiler, the install succeeds without it and the warning says why.
pip_build() {  # pip_build VENV [ENV...]: the documented build-from-source command
  local venv=$1
  shift
  /usr/bin/python3 -m venv --system-site-packages "$work/$venv" || fail "venv $venv"
  env -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null "$@" "$work/$venv/bin/python" -m pip install \
    --no-binary meridian --no-build-isolation --no-cache-dir \
    --no-index --find-links "$prefix/lib/meridian/python" meridian \
    >"$work/$venv.log" 2>&1 || { cat "$work/$venv.log" >&2; fail "pip build in $venv"; }
}
pip_build built-venv
site=$("$work/built-venv/bin/python" -I -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
found=$(env -u PYTHONPATH "$work/built-venv/bin/python" -I -c \
  'import meridian.collectives as c; m, why = c._load_extension(); print(m.__file__ if m else why)')
case $found in
  "$site"/meridian/_torch_capture*.so) ;;
  *) fail "pip built no extension the venv loads: $found" ;;
esac
job=torch-pip-built
PATH="$prefix/bin:$PATH" "${meridian[@]}" run --job "$job" -- \
  "$work/built-venv/bin/python" -I "$work/allreduce.py" >"$work/$job.out" 2>&1 ||
  { cat "$work/$job.out" >&2; fail "$job"; }
"${meridian[@]}" export --job "$job" -o "$work/$job.json" >/dev/null
python3 - "$work/$job.json" <<'PY' || { cat "$work/$job.out" >&2; fail "$job's allreduce"; }
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
spans = [(e["name"], e["args"]["bytes"]) for e in events if e.get("cat") == "c10d"]
assert spans == [("allreduce", 4000)], spans
PY
pip_build no-compiler-venv CXX=/nonexistent/c++
built=$(find "$work/no-compiler-venv" -name '_torch_capture*.so')
[ -z "$built" ] || fail "an extension was built without a compiler: $built"
why=$(env -u PYTHONPATH PATH=/usr/bin:/bin "$work/no-compiler-venv/bin/python" -I -W error -c \
  'import meridian.collectives as c; print(c._load_extension()[1])')
case $why in
  "its extension was not built when this package was installed: no C++ compiler (/nonexistent/c++) on PATH ("*) ;;
  *) fail "the no-compiler install's warning: $why" ;;
esac
echo "installed_test: pip built the extension for its venv's torch, and said why not without a compiler"

# 3. Man pages of every program a user runs.
for page in meridian meridian-run meridian-collector meridian-agent meridian-synth; do
  file="$prefix/share/man/man1/$page.1"
  [ -s "$file" ] || fail "no man page $file"
  head -20 "$file" | grep -qi "^\.TH \"\?${page}\"\? " || fail "$file has no .TH $page"
done
for daemon in meridian-collector meridian-agent meridian-synth; do
  for flag in $("$prefix/bin/$daemon" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
    grep -qF -- "${flag//-/\\-}" "$prefix/share/man/man1/$daemon.1" ||
      fail "man $daemon does not name $flag"
  done
done

[ "$(listing)" = "$before" ] || fail "something wrote into the installed prefix"
echo "installed_test: passed"
