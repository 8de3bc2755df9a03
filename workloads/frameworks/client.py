#!/usr/bin/python3
"""client.py - a load client for serve_model.py, in plain Python (no torch):
N requests over one keep-alive connection (or C connections, one thread
each), batch sizes 1..max-batch and input seeds from a fixed seed, so the
same run sends the same requests.  Meant to run without the allocator under
test (not preloaded): its own costs are then glibc's, not the server's.

    client.py URL [--requests 200] [--connections 1] [--max-batch 64] [--seed 0]
              [--wait 30]

URL is the server's base, e.g. http://127.0.0.1:8000 (serve_model.py prints
it on its ready line).  --wait: seconds to retry /health until it answers.
Prints one line `requests/s: R p50_ms: A p99_ms: B errors: E` (client-side
latency of each request, connection set-up excluded) and `checksum: HEX` over
every answer, in request order."""
import argparse
import hashlib
import http.client
import random
import sys
import threading
import time
import urllib.parse


def positive(text):
    v = int(text)
    if v < 1:
        raise ValueError(f"{text!r} is not a positive integer")
    return v


def percentile(sorted_vals, p):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_vals:
        return float("nan")
    k = max(0, min(len(sorted_vals) - 1, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


def wait_ready(host, port, timeout):
    end = time.monotonic() + timeout
    while True:
        try:
            c = http.client.HTTPConnection(host, port, timeout=5)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                c.close()
                return True
        except OSError:
            pass
        if time.monotonic() > end:
            return False
        time.sleep(0.05)


def worker(host, port, reqs, lat, answers, errors):
    c = http.client.HTTPConnection(host, port, timeout=30)
    for i, path in reqs:
        t0 = time.perf_counter()
        try:
            c.request("GET", path)
            r = c.getresponse()
            body = r.read()
            ok = r.status == 200
        except OSError:
            ok, body = False, b""
            c.close()
            c = http.client.HTTPConnection(host, port, timeout=30)
        lat[i] = time.perf_counter() - t0
        answers[i] = body
        if not ok:
            errors.append(i)
    c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--requests", type=positive, default=200)
    ap.add_argument("--connections", type=positive, default=1)
    ap.add_argument("--max-batch", type=positive, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--wait", type=float, default=30.0)
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.url)
    if u.scheme != "http" or not u.hostname or not u.port:
        print(f"client.py: '{a.url}' is not http://HOST:PORT", file=sys.stderr)
        return 2
    if not wait_ready(u.hostname, u.port, a.wait):
        print(f"client.py: no answer from '{a.url}/health' within {a.wait} s", file=sys.stderr)
        return 1
    rnd = random.Random(a.seed)
    paths = [f"/predict?batch={rnd.randint(1, a.max_batch)}&seed={rnd.randrange(2**31)}" for _ in range(a.requests)]
    lat = [0.0] * a.requests
    answers = [b""] * a.requests
    errors = []
    shares = [[(i, p) for i, p in enumerate(paths) if i % a.connections == k] for k in range(a.connections)]
    threads = [threading.Thread(target=worker, args=(u.hostname, u.port, s, lat, answers, errors)) for s in shares]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dt = time.perf_counter() - t0
    s = sorted(lat)
    h = hashlib.sha256()
    for body in answers:
        h.update(body)
    print(f"requests/s: {a.requests / dt:.1f} p50_ms: {percentile(s, 50) * 1e3:.3f} "
          f"p99_ms: {percentile(s, 99) * 1e3:.3f} errors: {len(errors)}")
    print(f"checksum: {h.hexdigest()[:16]}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
