#!/usr/bin/python3
"""train.py - PyTorch training steps (forward, backward, Adam) of an MLP on
one thread, sized so that its activations are large: with the defaults each
hidden activation is batch x hidden x 4 B = 8 MiB, about 40 MiB live per step,
so every step allocates and frees tensors above jemalloc's 8 MiB oversize
threshold and glibc's mmap threshold.

    train.py [--steps 5] [--batch 16384] [--hidden 128] [--seed 0]

Prints `steps/s: N` (the training loop, the measured region) and
`checksum: HEX` over every step's rounded loss and the final weights.
workloads/frameworks/train_step.cpp is the same step through libtorch's C++ API."""
import argparse
import time

import fwcommon
import torch
from torch import nn

IN, OUT = 32, 10


def model(hidden):
    return nn.Sequential(
        nn.Linear(IN, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(0.1),
        nn.Linear(hidden, hidden // 4), nn.ReLU(), nn.Linear(hidden // 4, OUT))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=fwcommon.positive, default=5)
    ap.add_argument("--batch", type=fwcommon.positive, default=16384)
    ap.add_argument("--hidden", type=fwcommon.positive, default=128)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    net = model(a.hidden).train()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(a.seed)
    ck = fwcommon.Checksum()
    fwcommon.region_begin()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        x = torch.randn(a.batch, IN, generator=gen)
        y = torch.randint(0, OUT, (a.batch,), generator=gen)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        ck.add(loss.item())
    dt = time.perf_counter() - t0
    fwcommon.region_end()
    for p in net.parameters():
        ck.add(p.detach().double().sum().item())
    print(f"batch {a.batch}, hidden {a.hidden}: activation {a.batch * a.hidden * 4 / 2**20:.1f} MiB, "
          f"{a.steps} steps, last loss {loss.item():.4f}")
    print(f"steps/s: {a.steps / dt:.2f}")
    print(f"checksum: {ck.hex()}")


if __name__ == "__main__":
    main()
