#!/usr/bin/env bash
# tests/web_test.py under bazel: Debian's python3 (python3-websocket) drives
# Debian's chromium against the collector and meridian-synth built here.
set -euo pipefail
runfiles="${TEST_SRCDIR}/meridian"
export HOME="${TEST_TMPDIR}"  # chromium's own files
exec /usr/bin/python3 "$runfiles/tests/web_test.py" \
  "$runfiles/collector/meridian-collector" "$runfiles/testing/meridian-synth" \
  "$runfiles/agent/meridian-agent" "$runfiles/cli/meridian" "$runfiles/tests/hang_job" \
  "$runfiles/tests/slow_job"
