"""A short torch.distributed NCCL training loop for tests/gpu/run.sh.

Run with: torchrun --nproc_per_node=1 torch_ddp.py STEPS
"""
import sys

import torch
import torch.distributed as dist


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    dist.init_process_group("nccl")
    device = torch.device("cuda", 0)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 10)).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 1024, device=device)
    y = torch.randint(0, 10, (64,), device=device)
    for step in range(steps):
        with torch.cuda.nvtx.range(f"step {step}"):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
    torch.cuda.synchronize()
    print(f"torch_ddp: {steps} steps, loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
