#!/usr/bin/python3
"""elementwise.py - a chain of elementwise and activation ops on large float
tensors, one thread: every op makes a new tensor (posix_memalign) and frees
the one before it, so each step is a run of same-size large allocations.

    elementwise.py [--size-mib 16] [--steps 8] [--seed 0]

Prints `steps/s: N` (the loop only, which is also the measured region) and
`checksum: HEX` (the same on every allocator and every run)."""
import argparse
import time

import fwcommon
import torch


def step(x, bias):
    y = torch.relu(x * 1.01 + bias)
    y = torch.sigmoid(y) * x
    y = torch.tanh(y) + torch.nn.functional.gelu(x)
    y = torch.exp(-y.abs()) * 0.5
    return torch.clamp(y - y.mean(), -1.0, 1.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mib", type=fwcommon.positive, default=16, help="MiB per tensor (float32)")
    ap.add_argument("--steps", type=fwcommon.positive, default=8)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    n = a.size_mib * 1024 * 1024 // 4
    x = torch.randn(n)
    bias = torch.randn(n) * 0.1
    ck = fwcommon.Checksum()
    fwcommon.region_begin()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        out = step(x, bias)
        ck.add(out.sum().item())
        x = x * 0.999 + out * 0.001
    dt = time.perf_counter() - t0
    fwcommon.region_end()
    print(f"tensor: {a.size_mib} MiB, {a.steps} steps")
    print(f"steps/s: {a.steps / dt:.2f}")
    print(f"checksum: {ck.hex()}")


if __name__ == "__main__":
    main()
