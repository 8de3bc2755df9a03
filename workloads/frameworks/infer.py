#!/usr/bin/python3
"""infer.py - PyTorch eager inference of a small CNN over requests whose batch
size changes from one to the next (1..max-batch, from a fixed seed), so the
allocator sees activations of many size classes, from a few KiB to MiB.

    infer.py [--requests 200] [--max-batch 64] [--seed 0]

Prints `samples/s: N` (images per second over the loop, the measured region)
and `checksum: HEX` over every request's rounded logits and predictions."""
import argparse
import random
import time

import fwcommon
import torch
from torch import nn


def model():
    """28x28 grey images, 10 classes: two conv blocks and an MLP head."""
    return nn.Sequential(
        nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=fwcommon.positive, default=200)
    ap.add_argument("--max-batch", type=fwcommon.positive, default=64)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    net = model().eval()
    rnd = random.Random(a.seed)
    batches = [rnd.randint(1, a.max_batch) for _ in range(a.requests)]
    gen = torch.Generator().manual_seed(a.seed)
    ck = fwcommon.Checksum()
    fwcommon.region_begin()
    t0 = time.perf_counter()
    with torch.no_grad():
        for b in batches:
            x = torch.rand(b, 1, 28, 28, generator=gen)
            logits = net(x)
            ck.add(logits.sum().item())
            ck.add_int(int(logits.argmax(1).sum()))
    dt = time.perf_counter() - t0
    fwcommon.region_end()
    print(f"requests: {a.requests}, batch 1..{a.max_batch}, {sum(batches)} samples")
    print(f"samples/s: {sum(batches) / dt:.1f}")
    print(f"checksum: {ck.hex()}")


if __name__ == "__main__":
    main()
