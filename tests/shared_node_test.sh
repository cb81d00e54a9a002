#!/usr/bin/env bash
# A second user on the same node cannot subvert the node agent
# (docs/security.md). Each case is an attack that worked before: it is run
# as two users (setpriv; so this needs root and is run by tests/run.sh, not
# inside bazel's sandbox, with copies of the programs both users may run).
#
#   1. planted directory: the attacker makes /tmp/meridian-VICTIM first,
#      world-writable, with agent.log and the lock linked to the victim's
#      file. The victim's agent and `meridian run` refuse it; the file is
#      unchanged.
#   2. planted socket: the attacker listens where the victim's process looks
#      for the agent. `meridian run` and the probe refuse it (SO_PEERCRED);
#      the attacker receives nothing.
#   3. the attacker connects to the victim's agent (its socket left open to
#      all): refused on accept, and 400 such connections neither stop the
#      victim's job nor lose any of its spans.
#   4. --max-connections: connections over the cap are closed at once.
#   5. --idle-timeout-ms: connections that say nothing are closed.
#   6. ... but not `meridian run`'s own, held while a job runs longer than
#      the timeout: the job's delivery is still confirmed.
#   7. a member of a root agent's --allow-group holds connections open (each
#      said something, so no idle timeout closes them): it gets at most
#      --max-connections-per-user of them, and root's job is still traced.
#   8. `meridian run` whose connection the agent closes unserved (full)
#      says so and exits 125 without running the job untraced.
#   9. the collector's web page: another user's 40 connections with
#      half-sent headers get 16 places (the rest closed at once), and the
#      collector's own user is still served at once.
# Prints "shared_node_test: N passed" or the first failure, exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "shared_node_test: skipped (needs root and setpriv to act as two users)"
  exit 0
fi
bazel build //agent:meridian-agent //cli:meridian //collector:meridian-collector \
  //capture/probe:libmeridian_probe.so //examples:data_parallel >/dev/null 2>&1
bin="$(bazel info bazel-bin 2>/dev/null)"
victim=$((200000 + RANDOM))
attacker=$((victim + 1))
work="$(mktemp -d /tmp/meridian-shared-XXXXXX)"
planted="/tmp/meridian-$victim"
cleanup() {
  # The daemons run under setpriv in a subshell: kill them by their path
  # (the work directory is this run's own), the scripts of it Python runs
  # (the attacker's listener: killing its subshell left it serving), then
  # the subshells.
  pkill -f "^$work/bin/" 2>/dev/null || true
  pkill -f "^$py $work/" 2>/dev/null || true
  kill $(jobs -p) 2>/dev/null || true
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$work" "$planted"
}
trap cleanup EXIT
fail() {
  echo "shared_node_test: FAILED: $*" >&2
  for f in "$work"/*.log "$work"/*.err; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
  done
  exit 1
}
as() {  # UID CMD...: runs CMD as that user (its own group, no others)
  local uid=$1
  shift
  setpriv --reuid="$uid" --regid="$uid" --clear-groups -- "$@"
}
chmod 0755 "$work"
mkdir "$work/bin" "$work/lib"
cp "$bin/agent/meridian-agent" "$bin/cli/meridian" \
  "$bin/collector/meridian-collector" "$bin/examples/data_parallel" "$work/bin/"
cp "$bin/capture/probe/libmeridian_probe.so" \
  "$bin/capture/probe/libmeridian_mpi_openmpi.so" "$work/lib/"
chmod -R a+rX "$work/bin" "$work/lib"
export MERIDIAN_PROBE_LIB="$work/lib/libmeridian_probe.so"
export MERIDIAN_AGENT_BIN="$work/bin/meridian-agent"
unset XDG_RUNTIME_DIR MERIDIAN_AGENT_SOCKET MERIDIAN_SPOOL
passed=0
# Debian's Python, which both users can run (not a per-user install).
py=/usr/bin/python3
# start NAME CMD...: runs CMD in the background, its first output line in
# $line once it prints it (every server here prints one when it serves);
# its pid in ${NAME}_pid, its stdin at fd ${NAME}_in if it reads one.
start() {
  local name=$1
  shift
  mkfifo "$work/$name.out" "$work/$name.in"
  "$@" <"$work/$name.in" >"$work/$name.out" 2>>"$work/$name.log" &
  printf -v "${name}_pid" %s "$!"
  exec {fd}>"$work/$name.in"
  printf -v "${name}_in" %s "$fd"
  exec {out}<"$work/$name.out"
  read -r line <&"$out"
}

# A collector every user's agent can reach.
start collector "$work/bin/meridian-collector" --listen 127.0.0.1:0 \
  --db "$work/collector.db" --http 127.0.0.1:0
address="${line#*listening on }"
address="${address%%,*}"
web="${line##*web }"

# 1. The planted directory.
secret="$work/victim-secret"
echo "the victim's own data" >"$secret"
chown "$victim:$victim" "$secret"
chmod 0600 "$secret"
before=$(sha256sum "$secret")
as "$attacker" mkdir -m 0777 "$planted"
as "$attacker" ln -s "$secret" "$planted/agent.log"
as "$attacker" ln -s "$secret" "$planted/agent.sock.lock"
as "$attacker" ln -s "$work" "$planted/spool"
# (An agent that accepts the directory serves until killed: the timeout
# bounds that failure, it synchronises nothing.)
if timeout 20 setpriv --reuid="$victim" --regid="$victim" --clear-groups -- \
  "$work/bin/meridian-agent" --collector "$address" \
  >"$work/case1-agent.out" 2>"$work/case1-agent.err"; then
  fail "case 1: the agent served a directory another user made"
fi
grep -qF "/tmp/meridian-$victim belongs to uid $attacker, not $victim: refusing it" \
  "$work/case1-agent.err" || fail "case 1: the agent did not say why it refused"
if timeout 20 setpriv --reuid="$victim" --regid="$victim" --clear-groups -- \
  "$work/bin/meridian" --collector "$address" run --job planted -- true \
  >"$work/case1-run.out" 2>"$work/case1-run.err"; then
  fail "case 1: meridian run used a directory another user made"
fi
grep -qF "belongs to uid $attacker" "$work/case1-run.err" ||
  fail "case 1: meridian run did not say why"
[ "$(sha256sum "$secret")" = "$before" ] || fail "case 1: the victim's file changed"
passed=$((passed + 1))

# 2. The planted socket: a listener of the attacker's records what it gets.
mkdir -m 1777 "$work/shared"
cat >"$work/listener.py" <<'PY'
import array, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen(16)
import os
os.chmod(sys.argv[1], 0o777)
print("ready", flush=True)
got = 0
while True:
    c, _ = s.accept()
    while True:
        data, anc, _, _ = c.recvmsg(4096, socket.CMSG_SPACE(16))
        if not data:
            break
        got += 1
        with open(sys.argv[2], "a") as f:
            f.write("message of %d bytes, %d ancillary\n" % (len(data), len(anc)))
    c.close()
PY
start listener as "$attacker" \
  "$py" "$work/listener.py" "$work/shared/agent.sock" "$work/shared/got.txt"
if as "$victim" env MERIDIAN_AGENT_SOCKET="$work/shared/agent.sock" \
  "$work/bin/meridian" --collector "$address" run --job planted -- true \
  >"$work/case2-run.out" 2>"$work/case2-run.err"; then
  fail "case 2: meridian run used another user's socket"
fi
grep -qF "$work/shared/agent.sock is served by another user" "$work/case2-run.err" ||
  fail "case 2: meridian run did not say why"
# The probe itself, in a process started without meridian run.
as "$victim" env MERIDIAN_AGENT_SOCKET="$work/shared/agent.sock" MERIDIAN_JOB=planted \
  LD_PRELOAD="$MERIDIAN_PROBE_LIB" "$work/bin/data_parallel" --steps 2 \
  >"$work/case2-probe.out" 2>"$work/case2-probe.err" ||
  fail "case 2: the traced program failed"
grep -qF "meridian: not registering with $work/shared/agent.sock: it is served by another user" \
  "$work/case2-probe.err" || fail "case 2: the probe did not say why it refused"
[ ! -e "$work/shared/got.txt" ] || fail "case 2: the attacker received: $(cat "$work/shared/got.txt")"
kill "$listener_pid"
passed=$((passed + 1))

# 3. The victim's agent, its socket left open to every user.
install -d -o "$victim" -g "$victim" -m 0711 "$work/victim"
start agent as "$victim" \
  "$work/bin/meridian-agent" --collector "$address" --socket "$work/victim/agent.sock"
as "$victim" chmod 0666 "$work/victim/agent.sock"
cat >"$work/flood.py" <<'PY'
import socket, struct, sys
path, n = sys.argv[1], int(sys.argv[2])
conns = []
for _ in range(n):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(path)
    conns.append(c)
# A status request (FlushRequest, timeout 0) on each: a served connection
# answers, a refused one reads the end of the connection.
answered = refused = 0
for c in conns:
    try:
        c.send(struct.pack("<IIII", 3, 0, 0, 0))
        data = c.recv(4096)
    except OSError:
        data = b""
    if data:
        answered += 1
    else:
        refused += 1
print("answered %d refused %d" % (answered, refused), flush=True)
sys.stdin.read()  # hold the connections until told
PY
start flood as "$attacker" "$py" "$work/flood.py" "$work/victim/agent.sock" 400
[ "$line" = "answered 0 refused 400" ] || fail "case 3: the attacker's connections: $line"
as "$victim" env MERIDIAN_AGENT_SOCKET="$work/victim/agent.sock" \
  "$work/bin/meridian" --collector "$address" run --job victim-job -- \
  "$work/bin/data_parallel" --steps 5 >"$work/case3-run.out" 2>"$work/case3-run.err" ||
  fail "case 3: the victim's job failed"
grep -qE "every span acknowledged .*, 0 dropped, 0 rejected" "$work/case3-run.err" ||
  fail "case 3: the victim's spans were not all delivered"
status=$(as "$victim" "$work/bin/meridian-agent" --status --socket "$work/victim/agent.sock")
echo "$status" | grep -qx "connections refused 400" ||
  fail "case 3: the agent's count: $(echo "$status" | grep refused)"
grep -qF "refused connection 1 (another user's process: uid $attacker" "$work/agent.log" ||
  fail "case 3: the agent's log does not name the refused user"
exec {flood_in}>&-
passed=$((passed + 1))

# 4. --max-connections: a second agent of the victim's, capped at 4; 6
# connections of the victim's own: 4 answered, 2 closed at once.
install -d -o "$victim" -g "$victim" -m 0700 "$work/capped"
start capped as "$victim" "$work/bin/meridian-agent" --collector "$address" \
  --socket "$work/capped/agent.sock" --max-connections 4
result=$(as "$victim" "$py" "$work/flood.py" "$work/capped/agent.sock" 6 </dev/null)
[ "$result" = "answered 4 refused 2" ] || fail "case 4: $result"
status=$(as "$victim" "$work/bin/meridian-agent" --status --socket "$work/capped/agent.sock")
echo "$status" | grep -qx "connections refused 2" ||
  fail "case 4: the agent's count: $(echo "$status" | grep refused)"
passed=$((passed + 1))

# 5. --idle-timeout-ms: connections of the victim's own that say nothing
# hold no place: each is closed by the agent (the script reads the end of
# each connection; its 30 s socket timeout is only a guard).
cat >"$work/silent.py" <<'PY'
import socket, sys
path, n = sys.argv[1], int(sys.argv[2])
conns = []
for _ in range(n):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.settimeout(30)
    c.connect(path)
    conns.append(c)
closed = sum(1 for c in conns if c.recv(4096) == b"")
print("closed %d" % closed, flush=True)
PY
install -d -o "$victim" -g "$victim" -m 0700 "$work/silent"
start silent as "$victim" "$work/bin/meridian-agent" --collector "$address" \
  --socket "$work/silent/agent.sock" --max-connections 4 --idle-timeout-ms 200
result=$(as "$victim" "$py" "$work/silent.py" "$work/silent/agent.sock" 4 </dev/null)
[ "$result" = "closed 4" ] || fail "case 5: $result"
status=$(as "$victim" "$work/bin/meridian-agent" --status --socket "$work/silent/agent.sock")
echo "$status" | grep -qx "connections refused 4" ||
  fail "case 5: the agent's count: $(echo "$status" | grep refused)"
passed=$((passed + 1))

# 6. A job that outlasts --idle-timeout-ms under `meridian run`: the job
# (silent.py again, inside meridian run) returns only once the agent has
# closed a silent connection it opened after meridian run's own, so the
# timeout has passed for meridian run's connection too; that one said
# hello and stays, and the delivery is confirmed.
as "$victim" env MERIDIAN_AGENT_SOCKET="$work/silent/agent.sock" \
  "$work/bin/meridian" --collector "$address" run --job long-job -- \
  "$py" "$work/silent.py" "$work/silent/agent.sock" 1 \
  >"$work/case6-run.out" 2>"$work/case6-run.err" </dev/null ||
  fail "case 6: the job failed"
[ "$(cat "$work/case6-run.out")" = "closed 1" ] ||
  fail "case 6: the job's silent connection: $(cat "$work/case6-run.out")"
grep -qE "every span acknowledged .*, 0 dropped, 0 rejected" "$work/case6-run.err" ||
  fail "case 6: meridian run's connection was closed: $(cat "$work/case6-run.err")"
passed=$((passed + 1))

# 7. A root agent serving a group, 8 places, of which a member may hold 4
# (half, the default): the member's 8 connections get 4 answers, and root's
# job, run beside the 4 held, is delivered whole.
group=$((victim + 2))
install -d -o 0 -g "$group" -m 0750 "$work/grouped"
start grouped "$work/bin/meridian-agent" --collector "$address" \
  --socket "$work/grouped/agent.sock" --allow-group "$group" --max-connections 8
start member setpriv --reuid="$attacker" --regid="$attacker" --groups="$group" -- \
  "$py" "$work/flood.py" "$work/grouped/agent.sock" 8
[ "$line" = "answered 4 refused 4" ] || fail "case 7: the member's connections: $line"
MERIDIAN_AGENT_SOCKET="$work/grouped/agent.sock" \
  "$work/bin/meridian" --collector "$address" run --job root-job -- \
  "$work/bin/data_parallel" --steps 5 >"$work/case7-run.out" 2>"$work/case7-run.err" ||
  fail "case 7: root's job failed: $(cat "$work/case7-run.err")"
grep -qE "every span acknowledged .*, 0 dropped, 0 rejected" "$work/case7-run.err" ||
  fail "case 7: root's spans were not all delivered"
grep -qF "over --max-connections-per-user: uid $attacker" "$work/grouped.log" ||
  fail "case 7: the agent's log does not say why it refused the member"
exec {member_in}>&-
passed=$((passed + 1))

# 8. The victim's agent with 2 places, both held by the victim's own
# connections: meridian run is closed unserved, says so, exits 125, and
# its command never runs.
install -d -o "$victim" -g "$victim" -m 0700 "$work/full"
start full as "$victim" "$work/bin/meridian-agent" --collector "$address" \
  --socket "$work/full/agent.sock" --max-connections 2
start holder as "$victim" "$py" "$work/flood.py" "$work/full/agent.sock" 2
[ "$line" = "answered 2 refused 0" ] || fail "case 8: the holder's connections: $line"
set +e
as "$victim" env MERIDIAN_AGENT_SOCKET="$work/full/agent.sock" \
  "$work/bin/meridian" --collector "$address" run --job full-job -- \
  touch "$work/full/ran" >"$work/case8-run.out" 2>"$work/case8-run.err" </dev/null
rc=$?
set -e
[ "$rc" = 125 ] || fail "case 8: meridian run exited $rc"
grep -qF "meridian run: job full-job: the agent on $work/full/agent.sock closed this connection unserved" \
  "$work/case8-run.err" || fail "case 8: meridian run did not say why: $(cat "$work/case8-run.err")"
[ ! -e "$work/full/ran" ] || fail "case 8: the job ran untraced"
exec {holder_in}>&-
passed=$((passed + 1))

# 9. Another user holds half-sent requests to the web page: at most 16 of
# its connections are kept (the rest are closed at once, read as the end of
# the connection while the kept ones wait), and root's request is answered.
cat >"$work/slow_http.py" <<'PY'
import socket, sys, urllib.parse
url, n = urllib.parse.urlparse(sys.argv[1]), int(sys.argv[2])
conns = []
for _ in range(n):
    c = socket.create_connection((url.hostname, url.port))
    c.sendall(b"GET /api/jobs HTTP/1.1\r\nHost: 127.0")
    conns.append(c)
# A closed connection reads its end at once; a kept one has nothing until
# the server's 5 s timeout. Whatever became readable within 1 s of the
# last one to is closed.
import select
closed = 0
pending = list(conns)
while pending:
    ready, _, _ = select.select(pending, [], [], 1.0)
    if not ready:
        break
    for c in ready:
        pending.remove(c)
        closed += 1
kept = len(pending)
print("kept %d closed %d" % (kept, closed), flush=True)
sys.stdin.read()  # hold them until told
PY
start slow as "$attacker" "$py" "$work/slow_http.py" "$web" 40
[ "$line" = "kept 16 closed 24" ] || fail "case 9: the other user's connections: $line"
page=$(curl -s -m 5 -o /dev/null -w "%{http_code}" "${web}index.html") ||
  fail "case 9: the page did not answer root"
[ "$page" = 200 ] || fail "case 9: the page answered root $page"
exec {slow_in}>&-
passed=$((passed + 1))

echo "shared_node_test: $passed passed"
