#!/usr/bin/env bash
# The `meridian` Python package as a user installs it: the wheel
# build_wheel.sh makes (as deploy/install.sh does), pip installed offline
# into venvs of Debian's and of a pyenv Python, then programs run
# with that venv's python -I (so only the venv's copy can be imported)
# record through a real agent and collector, checked in what `meridian
# export` gives back: exact span names and steps.
#   1. The probe library found: preloaded by `meridian run`, from
#      $MERIDIAN_PROBE_LIB, beside the `meridian` on PATH; and none.
#   2. meridian.steps(), auto_steps() with a fake torch
#      (testdata/fake_torch: torch 2's step hooks, and an older torch's
#      wrapped step methods), capture_record_functions() and
#      record_function(); the old module name with probe_binding_test.py.
#   3. Without a library, and with one but no agent, every call does
#      nothing and nothing raises; an unloadable $MERIDIAN_PROBE_LIB warns.
set -euo pipefail

runfiles="${TEST_SRCDIR}/meridian"
collector_bin="$runfiles/collector/meridian-collector"
agent_bin="$runfiles/agent/meridian-agent"
meridian_bin="$runfiles/cli/meridian"
probe_lib="$runfiles/capture/probe/libmeridian_probe.so"
job_py="$runfiles/tests/python_package_job.py"
fake_torch="$runfiles/tests/testdata/fake_torch"
# Sockets need a short path: not under TEST_TMPDIR.
work=$(mktemp -d /tmp/meridian-pypkg-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The package as deploy/install.sh installs it: a wheel built by
# build_wheel.sh into a directory standing for PREFIX/lib/meridian/python,
# then `pip install --no-index --find-links DIR meridian` into a venv of
# Debian's Python (the venv the jobs below run in), a venv of a pyenv
# Python, and a pyenv interpreter used directly (as a conda one is), none
# of which builds anything or writes into DIR.
prefix_python="$work/prefix-python"
"$runfiles/capture/probe/python/build_wheel.sh" "$runfiles/capture/probe/python" \
  "$prefix_python" >"$work/wheel.out" 2>&1 || { cat "$work/wheel.out" >&2; fail "build_wheel.sh"; }
[ "$(cat "$work/wheel.out")" = "$prefix_python/meridian-0.1.0-py3-none-any.whl" ] ||
  fail "build_wheel.sh printed: $(cat "$work/wheel.out")"
listing() { (cd "$prefix_python" && find . -printf '%p %s %T@\n' | sort); }
before=$(listing)

# pip_install PYTHON WHERE...: the documented command with PYTHON's pip.
pip_install() {
  local python=$1
  shift
  env -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null "$python" -m pip install \
    --no-index --find-links "$prefix_python" --no-cache-dir \
    --disable-pip-version-check "$@" meridian >"$work/pip.log" 2>&1 ||
    { cat "$work/pip.log" >&2; fail "pip install with $python"; }
}
# imports PYTHON FILE [VAR=VALUE...]: PYTHON imports meridian from FILE.
imports() {
  local python=$1 file=$2
  shift 2
  local got
  got=$(env -u PYTHONPATH "$@" "$python" -B -c 'import meridian; print(meridian.__file__)') ||
    fail "$python cannot import meridian"
  [ "$got" = "$file" ] || fail "$python imports meridian from $got, not $file"
}

python=/usr/bin/python3
[ -x "$python" ] || fail "no /usr/bin/python3 (Debian: python3)"
"$python" -m venv "$work/venv" || fail "python3 -m venv (Debian: python3-venv)"
venv_python="$work/venv/bin/python"
pip_install "$venv_python"
site=$("$venv_python" -I -B -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ ! -f "$site/meridian/__init__.py" ] || [ ! -f "$site/meridian_probe.py" ]; then
  fail "pip did not install meridian/ and meridian_probe.py into $site"
fi
imports "$venv_python" "$site/meridian/__init__.py"

# bazel's tests run without HOME: the user's, from the password database.
pyenv_root=${PYENV_ROOT:-$(getent passwd "$(id -u)" | cut -d: -f6)/.pyenv}
pyenv_python=
for candidate in "$pyenv_root"/versions/3.*/bin/python3; do
  [ -x "$candidate" ] && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 8))' &&
    pyenv_python=$candidate
done
if [ -n "$pyenv_python" ]; then
  "$pyenv_python" -m venv "$work/pyenv-venv" || fail "$pyenv_python -m venv"
  pip_install "$work/pyenv-venv/bin/python"
  pyenv_site=$("$work/pyenv-venv/bin/python" -I -B -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  imports "$work/pyenv-venv/bin/python" "$pyenv_site/meridian/__init__.py"
  pip_install "$pyenv_python" --target "$work/standalone"
  imports "$pyenv_python" "$work/standalone/meridian/__init__.py" PYTHONPATH="$work/standalone"
  echo "python_package_test: installed into $pyenv_python's venv and beside it"
else
  echo "python_package_test: no pyenv Python under $pyenv_root: installed into Debian's only"
fi
[ "$(listing)" = "$before" ] || fail "pip wrote into the installed package's directory"

# start NAME CMD...: runs CMD in the background, its first output line (each
# server here prints one once it serves) in $line.
start() {
  local name=$1
  shift
  mkfifo "$work/$name.fifo"
  "$@" >"$work/$name.fifo" 2>"$work/$name.log" &
  pids+=("$!")
  exec {fd}<"$work/$name.fifo"
  read -r line <&"$fd" || fail "$name did not start: $(cat "$work/$name.log")"
}

# A collector and the node's agent.
start collector "$collector_bin" --listen 127.0.0.1:0 --db "$work/m.db"
addr=$(sed -E 's/.* on ([^,]+),.*/\1/' <<<"$line")
socket="$work/agent.sock"
# No node counters: the jobs' spans are compared whole.
start agent "$agent_bin" --collector "$addr" --socket "$socket" --spool "$work/spool" \
  --node-counters-ms 0
export MERIDIAN_AGENT_SOCKET="$socket"
unset MERIDIAN_PROBE_LIB LD_PRELOAD

# run_job JOB SCENARIO [VAR=VALUE...]: the scenario under `meridian run`;
# its first output line (where meridian came from) in $work/JOB.found.
run_job() {
  local job=$1 scenario=$2
  shift 2
  env "$@" "$meridian_bin" --collector "$addr" run --job "$job" -- \
    "$venv_python" -I -B "$job_py" "$scenario" >"$work/$job.out" 2>"$work/$job.err" ||
    { cat "$work/$job.out" "$work/$job.err" >&2; fail "job $job"; }
  head -1 "$work/$job.out" >"$work/$job.found"
}

# direct NAME SCENARIO [VAR=VALUE...]: the scenario outside `meridian run`;
# output in $work/NAME.{out,err,found} as run_job's.
direct() {
  local name=$1 scenario=$2
  shift 2
  env "$@" "$venv_python" -I -B "$job_py" "$scenario" >"$work/$name.out" 2>"$work/$name.err" ||
    { cat "$work/$name.out" "$work/$name.err" >&2; fail "$name ($scenario)"; }
  head -1 "$work/$name.out" >"$work/$name.found"
}

# spans JOB: the job's spans as "name step" lines, sorted ("-" without one).
spans() {
  "$meridian_bin" --collector "$addr" export --job "$1" -o "$work/$1.json" >/dev/null
  python3 - "$work/$1.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
# Every process reports its resource use at exit (rusage.* counters,
# checked once below): left out of the comparisons.
rows = sorted("%s %s" % (e["name"], e.get("args", {}).get("step", "-"))
              for e in events if e["ph"] in ("X", "i", "I", "C")
              and not e["name"].startswith("rusage."))
print("\n".join(rows))
PY
}

expect_spans() {  # expect_spans JOB "name step" ...
  local job=$1
  shift
  printf '%s\n' "$@" | sort >"$work/$job.expected"
  spans "$job" >"$work/$job.actual"
  diff -u "$work/$job.expected" "$work/$job.actual" >&2 || fail "job $job's spans"
}

# found FILE LIBRARY ENABLED: the first line a job printed.
found() {
  python3 - "$1" "$2" "$3" "$site" <<'PY' || fail "$1: $(cat "$1")"
import json, sys
found = json.load(open(sys.argv[1]))
library = None if sys.argv[2] == "None" else sys.argv[2]
assert found["file"] == sys.argv[4] + "/meridian/__init__.py", found
assert found["library"] == library, (found, library)
assert found["enabled"] == (sys.argv[3] == "true"), found
PY
}

# 1 and 2. Under `meridian run`: the preloaded library, by its real path.
run_job py-loop loop
found "$work/py-loop.found" "$(realpath "$probe_lib")" true
expect_spans py-loop "step 0" "work-a 0" "step 1" "work-b 1" "step 2" "work-c 2" \
  "step 10" "early 10" "step 11"
python3 - "$work/py-loop.json" <<'PY' || fail "py-loop: not one of each rusage counter at exit"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = sorted(e["name"] for e in events
               if e["ph"] == "C" and e["name"].startswith("rusage."))
assert names == ["rusage.context_switches", "rusage.max_rss_bytes",
                 "rusage.system_ns", "rusage.user_ns"], names
PY

run_job py-auto auto-steps MERIDIAN_TEST_FAKE_TORCH="$fake_torch"
expect_spans py-auto \
  "step 0" "forward 0" "backward 0" "Optimizer.step#SGD.step 0" \
  "step 1" "forward 1" "backward 1" "Optimizer.step#SGD.step 1" \
  "step 2" "forward 2" "backward 2" "Optimizer.step#SGD.step 2" \
  "Optimizer.step#SGD.step 3" "after 3"

# The step auto_steps() opened at the last optimizer.step() never ended (no
# "step" span): `meridian steps` lists the three that did, not a fourth.
"$meridian_bin" --collector "$addr" steps --job py-auto --json >"$work/py-auto.steps" ||
  fail "steps of py-auto"
python3 - "$work/py-auto.steps" <<'PY' || fail "py-auto's steps: $(cat "$work/py-auto.steps")"
import json, sys
steps = [s["step"] for s in json.load(open(sys.argv[1]))["steps"]]
assert steps == [0, 1, 2], steps
PY

# An older torch: no global step hooks, the step methods wrapped instead.
run_job py-auto-old auto-steps MERIDIAN_TEST_FAKE_TORCH="$fake_torch" \
  MERIDIAN_FAKE_TORCH_STEP_HOOKS=0
expect_spans py-auto-old \
  "step 0" "forward 0" "backward 0" "Optimizer.step#SGD.step 0" \
  "step 1" "forward 1" "backward 1" "Optimizer.step#SGD.step 1" \
  "step 2" "forward 2" "backward 2" "Optimizer.step#SGD.step 2" \
  "Optimizer.step#SGD.step 3" "after 3"

# An optimizer step inside another's counts once.
run_job py-wrapped wrapped MERIDIAN_TEST_FAKE_TORCH="$fake_torch"
expect_spans py-wrapped \
  "step 0" "Optimizer.step#Wrapping.step 0" "Optimizer.step#SGD.step 0" \
  "step 1" "Optimizer.step#Wrapping.step 1" "Optimizer.step#SGD.step 1"

# The old module name, and tests/probe_binding_test.py's calls, in the venv.
"$meridian_bin" --collector "$addr" run --job py-binding -- "$venv_python" -I -B \
  "$runfiles/tests/probe_binding_test.py" >"$work/py-binding.out" 2>&1 ||
  { cat "$work/py-binding.out" >&2; fail "probe_binding_test.py in the venv"; }
expect_spans py-binding \
  "step 0" "forward 0" "NEGOTIATE_ALLREDUCE 0" "mark 0" "loss 0" \
  "step 1" "forward 1" "NEGOTIATE_ALLREDUCE 1" "mark 1" "loss 1" \
  "step 2" "forward 2" "NEGOTIATE_ALLREDUCE 2" "mark 2" "loss 2"

# $MERIDIAN_PROBE_LIB, outside `meridian run`: loaded by the package (the
# agent is told to send what it has before the check).
direct py-lib found MERIDIAN_JOB=py-lib MERIDIAN_PROBE_LIB="$probe_lib"
found "$work/py-lib.found" "$probe_lib" true
"$agent_bin" --flush --socket "$socket" >/dev/null || fail "agent --flush"
expect_spans py-lib "step 0" "found 0"

# 3. Beside the `meridian` on PATH (an install.sh prefix), with no agent
# socket: loaded, records nothing, every call returns.
mkdir -p "$work/prefix/bin" "$work/prefix/lib" "$work/empty"
cp "$meridian_bin" "$work/prefix/bin/"
cp "$probe_lib" "$work/prefix/lib/"
direct beside no-op MERIDIAN_AGENT_SOCKET= PATH="$work/prefix/bin" \
  MERIDIAN_TEST_FAKE_TORCH="$fake_torch"
found "$work/beside.found" "$(realpath "$work")/prefix/lib/libmeridian_probe.so" false

# No library anywhere, with and without torch: every call does nothing.
direct none-torch no-op MERIDIAN_AGENT_SOCKET= PATH="$work/empty" \
  MERIDIAN_TEST_FAKE_TORCH="$fake_torch"
found "$work/none-torch.found" None false
direct none no-op MERIDIAN_AGENT_SOCKET= PATH="$work/empty"
found "$work/none.found" None false

# An unloadable $MERIDIAN_PROBE_LIB: a warning naming it, then no library.
direct missing no-op PATH="$work/empty" MERIDIAN_PROBE_LIB="$work/missing.so"
grep -qF "MERIDIAN_PROBE_LIB=$work/missing.so could not be loaded" "$work/missing.err" ||
  fail "no warning for the missing library: $(cat "$work/missing.err")"
found "$work/missing.found" None false

echo "python_package_test: passed"

# Not pip installed: `meridian run` of an install.sh prefix puts the
# prefix's copy (lib/meridian/python) on PYTHONPATH, ahead of the user's.
mkdir -p "$work/prefix/lib/meridian"
cp -rL "$runfiles/capture/probe/python" "$work/prefix/lib/meridian/python"
PYTHONPATH=/nonexistent "$work/prefix/bin/meridian" --collector "$addr" run --job py-path -- \
  /usr/bin/python3 -B -c 'import meridian, os, sys; print(os.path.dirname(os.path.dirname(meridian.__file__))); print(sys.path[2])' \
  >"$work/py-path.out" 2>"$work/py-path.err" ||
  { cat "$work/py-path.err" >&2; fail "import meridian under meridian run"; }
[ "$(cat "$work/py-path.out")" = "$(realpath "$work")/prefix/lib/meridian/python
/nonexistent" ] || fail "meridian run's PYTHONPATH: $(cat "$work/py-path.out")"
