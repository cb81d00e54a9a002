"""A DistributedDataParallel job over gloo with real torch, one worker of
it: a 3-layer MLP (256-512-512-10, 399,370 parameters: 1,597,480 bytes of
gradients a step), SGD, 20 steps, then dist.barrier(); started the way
torchrun starts workers (env://: MASTER_ADDR, MASTER_PORT, RANK,
WORLD_SIZE...). Only meridian.auto_steps() and
meridian.capture_record_functions() are added for Meridian; the collectives
are recorded by `import meridian` alone (meridian/collectives.py).

    torch_ddp_job.py [--late-rank R --late-ms MS] [--steps N]
                     [--meridian-first]

--late-rank: rank R computes MS ms longer in every step (a straggler).
--meridian-first: imports meridian, and starts its capture by hand,
before torch is imported (else meridian is imported after torch, and the
capture starts by itself).
--p2p: in step 0, 5 round trips of dist.send/dist.recv (1,000
floats, tags i and 100 + i) and one isend/irecv from rank 0 to 1 (tag 7).
--hang-rank R: after the steps, every rank calls dist.all_reduce but rank R,
which stops in its own code first (forever, until killed); each prints
"hanging" when it gets there.
--groups: after the steps, an all_to_all_single on the default group (an
operation torch calls without the dispatcher), an allreduce on a new group
of both ranks, the group destroyed, then a broadcast on another new group.
Prints, as JSON on its last line, its rank, the capture's counters and
each step's wall time in ns (bench/torch_bench.sh reads them).
"""

import argparse
import json
import os
import sys
import threading
import time

if "--meridian-first" in sys.argv:
    import meridian
    meridian.capture_collectives()  # which imports torch itself
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import meridian  # noqa: F811 (first or again)


def exchange(rank):
    """--p2p's messages."""
    t = torch.ones(1000)
    other = 1 - rank
    for i in range(5):
        if rank == 0:
            dist.send(t, other, tag=i)
            dist.recv(t, other, tag=100 + i)
        else:
            dist.recv(t, other, tag=i)
            dist.send(t, other, tag=100 + i)
    request = (dist.isend(t, other, tag=7) if rank == 0
               else dist.irecv(t, other, tag=7))
    request.wait()


def stuck_in_own_code():
    """--hang-rank's rank: never returns."""
    threading.Event().wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--late-rank", type=int, default=-1)
    parser.add_argument("--late-ms", type=float, default=0)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--meridian-first", action="store_true")
    parser.add_argument("--groups", action="store_true")
    parser.add_argument("--p2p", action="store_true")
    parser.add_argument("--hang-rank", type=int, default=-1)
    parser.add_argument("--async-rank", type=int, default=-1)
    args = parser.parse_args()
    meridian.auto_steps()
    meridian.capture_record_functions()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10))
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(rank)
    step_ns = []
    for step in range(args.steps):
        start = time.perf_counter_ns()
        if args.p2p and step == 0:
            exchange(rank)
        x = torch.randn(32, 256, generator=generator)
        y = torch.randint(0, 10, (32,), generator=generator)
        if rank == args.late_rank:
            time.sleep(args.late_ms / 1000)
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_ns.append(time.perf_counter_ns() - start)
    dist.barrier()
    if args.hang_rank >= 0:
        print("hanging", flush=True)
        if rank == args.hang_rank:
            stuck_in_own_code()
        if rank == args.async_rank:
            dist.all_reduce(torch.ones(1000), async_op=True).wait()
        else:
            dist.all_reduce(torch.ones(1000))
    if args.groups:
        dist.all_to_all_single(torch.empty(8), torch.ones(8))
        group = dist.new_group([0, 1])
        dist.all_reduce(torch.ones(10), group=group)
        dist.destroy_process_group(group)
        again = dist.new_group([0, 1])
        dist.broadcast(torch.ones(20), 1, group=again)
    counters = meridian.collectives.counters()
    dist.destroy_process_group()
    print(json.dumps({"rank": rank, "capture": counters, "pid": os.getpid(),
                      "step_ns": step_ns}), flush=True)


if __name__ == "__main__":
    main()
