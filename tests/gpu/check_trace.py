#!/usr/bin/env python3
"""Checks a Chrome trace exported from a GPU job (tests/gpu/run.sh).

check_trace.py TRACE.json STEPS [--torch] [--nccl]: the trace must hold,
on GPU stream tracks, kernels, host-to-device and device-to-host copies and
memsets with sane GPU times (longer than 0, shorter than 10 s, inside the
job), each linked to its CPU launch by a flow arrow; the NVTX ranges the
program pushed; and with --nccl (2 GPUs or more), NCCL AllReduce
executions with GPU times, seq, comm and algo. Prints what it counted; exits 1
naming the first failed check.
"""
import collections
import json
import sys


def main():
    trace = json.load(open(sys.argv[1]))
    steps = int(sys.argv[2])
    torch = "--torch" in sys.argv
    want_nccl = "--nccl" in sys.argv
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    flows = [e for e in trace["traceEvents"] if e.get("ph") in ("s", "f")]
    by_cat = collections.Counter(e["cat"] for e in events)
    names = collections.Counter((e["cat"], e["name"]) for e in events)
    print("spans by category:", dict(by_cat))
    failures = []

    def need(ok, what):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what)

    gpu = [e for e in events if e["cat"] in
           ("cuda_kernel", "cuda_memcpy", "cuda_memset", "nccl")]
    need(all(0 < e["dur"] < 10e6 for e in gpu if e["cat"] != "cuda_memset"),
         "every kernel, copy and NCCL execution lasts between 0 and 10 s")
    nccl = [e for e in events if e["cat"] == "nccl"]
    print(f"NCCL executions: {len(nccl)}")
    if want_nccl:
        need(len(nccl) >= steps, f"at least {steps} NCCL executions")
        need(all("seq" in e["args"] and "comm" in e["args"] and
                 "algo" in e["args"] and "timing" not in e["args"]
                 for e in nccl),
             "NCCL executions carry seq, comm, algo and GPU timing")
    need(by_cat["cuda_kernel"] >= steps,
         f"at least {steps} kernels ({by_cat['cuda_kernel']})")
    if not torch:
        need(names[("cuda_memcpy", "Memcpy HtoD")] >= steps, "HtoD copies")
        need(names[("cuda_memcpy", "Memcpy DtoH")] >= steps, "DtoH copies")
        need(by_cat["cuda_memset"] >= steps, "memsets")
        need(names[("nvtx", "step")] == steps, f"{steps} NVTX 'step' ranges")
        need(names[("cuda_sync", "cudaStreamSynchronize")] >= steps,
             "stream synchronizations")
    starts = {e["id"]: e["ts"] for e in flows if e["ph"] == "s"}
    ends = {e["id"]: e["ts"] for e in flows if e["ph"] == "f"}
    linked = set(starts) & set(ends)
    need(len(linked) >= steps, f"launch -> GPU flow arrows ({len(linked)})")
    # One clock: GPU work starts after the call that launched it began.
    early = [i for i in linked if ends[i] < starts[i] - 0.001]
    need(not early, f"no GPU work starts before its launch ({len(early)} do)")
    if failures:
        print("FAILED:", failures[0])
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
