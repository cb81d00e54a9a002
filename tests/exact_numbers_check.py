"""Compares what exact_numbers_job recorded with every output of Meridian.

usage: exact_numbers_check.py [--chrome-only] EXPECT.json OUTDIR

With --chrome-only, only OUTDIR/t.json is checked (a trace imported and
exported again).

OUTDIR holds what exact_numbers_test.sh wrote: the Chrome trace (t.json),
the Kineto traces (kineto/J_R.pt.trace.json), the Perfetto trace decoded
by protoc (p.txt), and each command's --json (jobs, stats, steps, matrix,
compare, stragglers, clocks, replay, cp_N for the critical path of step N).

JSON is read with numbers kept as written: integers as Python ints, other
numbers as Decimal, so a value is checked as the text that was written,
not through a float. A double is equal when its 64 bits are (so -0.0 is
not 0.0); an integer when its digits are. Exits 1 naming the first
difference.
"""

import decimal
import glob
import json
import os
import re
import struct
import sys

decimal.getcontext().prec = 60


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path) as f:
        return json.load(f, parse_float=decimal.Decimal)


def bits_of_text(text):
    """The double a JSON number's text reads as (correctly rounded)."""
    return struct.unpack("<Q", struct.pack("<d", float(text)))[0]


def bits_of_hex(text):
    return int(text, 16)


def real_value(value, where):
    """A JSON value that must be a float: written with '.' or an exponent."""
    if not isinstance(value, decimal.Decimal):
        fail("%s: %r is not written as a float" % (where, value))
    return bits_of_text(str(value))


def ns_of_micros(value, where):
    """µs with three decimals (Decimal) to integer ns, exactly."""
    if not isinstance(value, decimal.Decimal):
        fail("%s: ts %r is not a decimal" % (where, value))
    ns = value * 1000
    if ns != ns.to_integral_value():
        fail("%s: %s µs is not a whole number of ns" % (where, value))
    return int(ns)


chrome_only = sys.argv[1] == "--chrome-only"
if chrome_only:
    del sys.argv[1]
expect = json.load(open(sys.argv[1]))
out = sys.argv[2]
job = expect["job"]
spans = expect["spans"]
for s in spans:
    s["start_ns"] = int(s["start_ns"])
    if s["kind"] == "complete":
        s["dur_ns"] = int(s["dur_ns"])
        s["bytes"] = int(s["bytes"])
        for a in s["args"]:
            a[2] = int(a[2]) if a[1] == "int" else (
                bits_of_hex(a[2]) if a[1] == "real" else a[2])
    else:
        s["value"] = bits_of_hex(s["value"])
complete = [s for s in spans if s["kind"] == "complete"]
counters = [s for s in spans if s["kind"] == "counter"]
job_start = min(s["start_ns"] for s in spans)
job_end = max(s["start_ns"] + s.get("dur_ns", 0) for s in spans)
checked = {}


def saturated(total):
    """A total past int64 is shown as int64's largest (common/saturating.h)."""
    return min(total, 2**63 - 1)


def count(what, n=1):
    checked[what] = checked.get(what, 0) + n


# What a trace event must carry, keyed by (rank, name, absolute start ns).
def expected_events():
    events = {}
    for s in spans:
        key = (s["rank"], s["name"], s["start_ns"])
        if key in events:
            fail("the job recorded two spans at %r" % (key,))
        events[key] = s
    return events


def check_args(s, args, where, fmt):
    if s["kind"] == "counter":
        got = args.get("loss")
        if got is None:
            fail("%s: no value" % where)
        if real_value(got, where) != s["value"]:
            fail("%s: counter %s, recorded bits %016x" % (where, got, s["value"]))
        count(fmt + ": counter values")
        return
    if args.get("bytes", 0) != s["bytes"]:
        fail("%s: bytes %r, recorded %d" % (where, args.get("bytes"), s["bytes"]))
    if args.get("step") != s["step"]:
        fail("%s: step %r, recorded %d" % (where, args.get("step"), s["step"]))
    for key, kind, value in s["args"]:
        got = args.get(key)
        if kind == "int":
            if type(got) is not int or got != value:
                fail("%s: arg %s = %r, recorded %d" % (where, key, got, value))
        elif kind == "real":
            if real_value(got, where + " arg " + key) != value:
                fail("%s: arg %s = %s, recorded bits %016x" % (where, key, got, value))
        elif got != value:
            fail("%s: arg %s = %r, recorded %r" % (where, key, got, value))
        count(fmt + ": args")


def check_trace_events(events, origin_ns, rank_of, fmt, ranks):
    want = expected_events()
    seen = set()
    for e in events:
        if e.get("ph") not in ("X", "C") or e.get("cat") == "critical_path":
            continue
        if str(e.get("name", "")).startswith("ProfilerStep#"):
            continue  # Kineto's step spans, made from the steps' tags
        where = "%s event %s at ts %s" % (fmt, e.get("name"), e.get("ts"))
        start = origin_ns + ns_of_micros(e["ts"], where)
        key = (rank_of(e), e["name"], start)
        s = want.get(key)
        if s is None:
            fail("%s: no span recorded at %r (ns)" % (where, key))
        if e["ph"] == "X":
            dur = ns_of_micros(e["dur"], where)
            if dur != s["dur_ns"]:
                fail("%s: dur %d ns, recorded %d" % (where, dur, s["dur_ns"]))
        check_args(s, e.get("args", {}), where, fmt)
        seen.add(key)
        count(fmt + ": events")
    missing = [k for k, s in want.items() if s["rank"] in ranks and k not in seen]
    if missing:
        fail("%s: %d recorded spans missing, e.g. %r" % (fmt, len(missing), missing[0]))


# 1. The Chrome trace: ts in µs with three decimals from otherData.epoch_ns.
chrome = load(os.path.join(out, "t.json"))
epoch = chrome["otherData"]["epoch_ns"]
if epoch != job_start:
    fail("chrome: epoch_ns %r, the job's first start is %d" % (epoch, job_start))
pid_rank = {}
for e in chrome["traceEvents"]:
    if e.get("ph") == "M" and e.get("name") == "process_name":
        m = re.match(r"rank (\d+)", e["args"]["name"])
        if m:
            pid_rank[e["pid"]] = int(m.group(1))
check_trace_events(chrome["traceEvents"], epoch, lambda e: pid_rank[e["pid"]],
                   "chrome", {0, 1})
if chrome_only:
    print("exact: " + ", ".join("%s %d" % kv for kv in sorted(checked.items())))
    sys.exit(0)

# 2. Kineto: one file per rank, ts from baseTimeNanoseconds.
for rank in (0, 1):
    path = os.path.join(out, "kineto", "%s_%d.pt.trace.json" % (job, rank))
    kineto = load(path)
    check_trace_events(kineto["traceEvents"], kineto["baseTimeNanoseconds"],
                       lambda e, rank=rank: rank, "kineto rank %d" % rank, {rank})

# 3. Perfetto (decoded by protoc): every recorded double among the
#    double values, every int arg among the int values.
perfetto = open(os.path.join(out, "p.txt")).read()
doubles = {}
for text in re.findall(r"double_(?:counter_)?value: (\S+)", perfetto):
    b = bits_of_text(text)
    doubles[b] = doubles.get(b, 0) + 1
ints = {}
for text in re.findall(r"\bint_value: (\S+)", perfetto):
    ints[int(text)] = ints.get(int(text), 0) + 1
for s in spans:
    recorded = [s["value"]] if s["kind"] == "counter" else [
        v for _, kind, v in s["args"] if kind == "real"]
    for b in recorded:
        if doubles.get(b, 0) == 0:
            fail("perfetto: no double with bits %016x (%r)" % (
                b, struct.unpack("<d", struct.pack("<Q", b))[0]))
        doubles[b] -= 1
        count("perfetto: doubles")
    for _, kind, v in s.get("args", []):
        if kind == "int":
            if ints.get(v, 0) == 0:
                fail("perfetto: no int_value %d" % v)
            ints[v] -= 1
            count("perfetto: ints")

# 4. jobs --json: the job's first start and last end, absolute ns.
jobs = [j for j in load(os.path.join(out, "jobs.json"))["jobs"] if j["job"] == job]
if len(jobs) != 1 or jobs[0]["start_ns"] != job_start or jobs[0]["end_ns"] != job_end:
    fail("jobs --json: %r, recorded %d..%d" % (jobs, job_start, job_end))
if jobs[0]["spans"] != len(spans):
    fail("jobs --json: %r spans, recorded %d" % (jobs[0]["spans"], len(spans)))
count("jobs")

# 5. stats --json: each MPI operation's calls, bytes and time, summed.
stats = load(os.path.join(out, "stats.json"))
for name in ("MPI_Send", "MPI_Recv"):
    mine = [s for s in complete if s["name"] == name]
    ops = [o for o in stats["ops"] if o["name"] == name]
    want = (len(mine), saturated(sum(s["bytes"] for s in mine)),
            sum(s["dur_ns"] for s in mine))
    if len(ops) != 1:
        fail("stats --json: %d entries for %s" % (len(ops), name))
    got = (ops[0]["calls"], ops[0]["bytes"], ops[0]["dur_ns"])
    if got != want:
        fail("stats --json %s: (calls, bytes, dur_ns) %r, recorded %r" % (name, got, want))
    count("stats")

# 6. steps --json: per step and rank, the first start and the iteration
#    time, absolute ns; compute_ns is the time in its spans (they do not
#    overlap).
steps = load(os.path.join(out, "steps.json"))["steps"]
if [s["step"] for s in steps] != [0, 1, 2, 3]:
    fail("steps --json: steps %r" % [s["step"] for s in steps])
for st in steps:
    mine = [s for s in complete if s["step"] == st["step"]]
    first = min(s["start_ns"] for s in mine)
    last = max(s["start_ns"] + s["dur_ns"] for s in mine)
    if (st["start_ns"], st["dur_ns"]) != (first, last - first):
        fail("steps --json step %d: start %r dur %r, recorded %d, %d" % (
            st["step"], st["start_ns"], st["dur_ns"], first, last - first))
    if len(st["ranks"]) != 2:
        fail("steps --json step %d: %d ranks" % (st["step"], len(st["ranks"])))
    for r in st["ranks"]:
        ours = [s for s in mine if s["rank"] == r["rank"]]
        first = min(s["start_ns"] for s in ours)
        last = max(s["start_ns"] + s["dur_ns"] for s in ours)
        user = sum(s["dur_ns"] for s in ours if s["name"].startswith("op"))
        mpi = sum(s["dur_ns"] for s in ours if s["name"].startswith("MPI"))
        got = (r["start_ns"], r["dur_ns"], r["compute_ns"], r["communication_ns"])
        if got != (first, last - first, user, mpi):
            fail("steps --json step %d rank %d: %r, recorded %r" % (
                st["step"], r["rank"], got, (first, last - first, user, mpi)))
        count("steps")

# 7. critical-path --json --step N: the step's window, absolute ns; every
#    segment inside it, and their durations summing to it.
for n in range(4):
    cp = load(os.path.join(out, "cp_%d.json" % n))
    mine = [s for s in complete if s["step"] == n]
    first = min(s["start_ns"] for s in mine)
    last = max(s["start_ns"] + s["dur_ns"] for s in mine)
    if (cp["start_ns"], cp["dur_ns"]) != (first, last - first):
        fail("critical-path --step %d: %r %r, recorded %d, %d" % (
            n, cp["start_ns"], cp["dur_ns"], first, last - first))
    if sum(s["dur_ns"] for s in cp["segments"]) != cp["dur_ns"]:
        fail("critical-path --step %d: segments do not sum to the step" % n)
    explained = float(cp["dur_ns"] - cp["untraced_ns"]) / float(cp["dur_ns"])
    if real_value(cp["explained"], "critical-path explained") != bits_of_text(repr(explained)):
        fail("critical-path --step %d: explained %s, (dur - untraced) / dur is %r" % (
            n, cp["explained"], explained))
    count("critical-path")

# 8. matrix --json: rank 0 sent every MPI_Send's bytes to rank 1.
matrix = load(os.path.join(out, "matrix.json"))["matrix"]
sends = [s for s in complete if s["name"] == "MPI_Send"]
want = [{"from": 0, "to": 1, "messages": len(sends),
         "bytes": saturated(sum(s["bytes"] for s in sends))}]
if matrix != want:
    fail("matrix --json: %r, recorded %r" % (matrix, want))
count("matrix")

# 9. compare --json of rank 0 with rank 1: each side's totals exact.
compare = load(os.path.join(out, "compare.json"))
for side, rank in (("a", 0), ("b", 1)):
    mine = [s for s in complete if s["rank"] == rank]
    want = {"count": len(mine), "dur_ns": sum(s["dur_ns"] for s in mine),
            "bytes": saturated(sum(s["bytes"] for s in mine))}
    if compare["total"][side] != want:
        fail("compare --json total %s: %r, recorded %r" % (side, compare["total"][side], want))
    count("compare")

# 10. The other reports: integers stay integers, other numbers floats.
for name in ("stragglers", "clocks", "replay"):
    doc = load(os.path.join(out, name + ".json"))

    def walk(v, path):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, path + "." + k)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, "%s[%d]" % (path, i))
        elif isinstance(v, decimal.Decimal) and (path.endswith("_ns") or path.endswith("rank")):
            fail("%s --json: %s = %s is not an integer" % (name, path, v))
    walk(doc, name)
    count(name)
replay = load(os.path.join(out, "replay.json"))
share = float(replay["saving_ns"]) / float(replay["measured_ns"])
if real_value(replay["saving_share"], "replay saving_share") != bits_of_text(repr(share)):
    fail("replay --json: saving_share %s, saving / measured is %r" % (
        replay["saving_share"], share))

for what in ("chrome: args", "chrome: counter values", "kineto rank 1: args",
             "perfetto: doubles", "perfetto: ints", "stats", "steps",
             "critical-path", "matrix", "compare"):
    if checked.get(what, 0) == 0:
        fail("nothing checked in " + what)
print("exact: " + ", ".join("%s %d" % kv for kv in sorted(checked.items())))
