#!/usr/bin/python3
"""numpy_pipeline.py - a numpy data pipeline, one thread: each batch is drawn,
normalized, transformed, filtered, sorted and summarized, and every step makes
new arrays (numpy allocates array data with malloc), most of them MiB-sized.

    numpy_pipeline.py [--batches 8] [--rows 1024] [--cols 1024] [--seed 0]

Prints `batches/s: N` (the loop, the measured region) and `checksum: HEX`
over rounded statistics of every batch."""
import argparse
import time

import fwcommon
import numpy as np


def batch(rng, rows, cols):
    a = rng.standard_normal((rows, cols))                 # rows x cols float64
    a = (a - a.mean(axis=0)) / (a.std(axis=0) + 1e-9)     # normalize columns
    b = np.tanh(a) * np.exp(-0.5 * a * a)                 # elementwise transform
    keep = b[np.abs(b).max(axis=1) > 0.3]                 # filter rows (boolean index: a copy)
    s = np.sort(keep, axis=1)                             # sort each row
    c = np.cumsum(s, axis=1)
    hist, _ = np.histogram(b, bins=64, range=(-1.0, 1.0))
    q = np.percentile(c[:, -1], [5, 50, 95])
    return [float(c.sum()), float(q[0]), float(q[1]), float(q[2]), keep.shape[0]] + hist.tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=fwcommon.positive, default=8)
    ap.add_argument("--rows", type=fwcommon.positive, default=1024)
    ap.add_argument("--cols", type=fwcommon.positive, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    ck = fwcommon.Checksum()
    fwcommon.region_begin()
    t0 = time.perf_counter()
    for _ in range(a.batches):
        stats = batch(rng, a.rows, a.cols)
        for v in stats[:4]:
            ck.add(v)
        for v in stats[4:]:
            ck.add_int(v)
    dt = time.perf_counter() - t0
    fwcommon.region_end()
    print(f"batches: {a.batches} of {a.rows}x{a.cols} float64 ({a.rows * a.cols * 8 / 2**20:.0f} MiB)")
    print(f"batches/s: {a.batches / dt:.2f}")
    print(f"checksum: {ck.hex()}")


if __name__ == "__main__":
    main()
