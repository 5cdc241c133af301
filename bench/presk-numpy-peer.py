#!/usr/bin/env python3
"""presk-numpy-peer: the numpy peer of `presk bench`'s 1024^3 f32 matmul (issue 11): C = A @ B
with A, B, C n x n float32 (C preallocated, numpy.matmul(..., out=C)), on one thread (the BLAS
thread counts pinned to 1 through the environment before numpy is imported); prints the median
of --repeat calls (after one untimed call) in microseconds and GFLOP/s (2 n^3 operations), in
presk-sgemm-peer's format. Exit status 77 (a skip) without numpy."""
import argparse
import os
import sys

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
            "NUMEXPR_NUM_THREADS"):
    os.environ[var] = "1"

import time  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024, help="the matrices' size (default 1024)")
    ap.add_argument("--repeat", type=int, default=10, help="timed calls (default 10); the median is printed")
    a = ap.parse_args()
    if not 1 <= a.n <= 8192 or not 1 <= a.repeat <= 1000:
        ap.error("--n must be in 1..8192 and --repeat in 1..1000")
    try:
        import numpy as np
    except ImportError:
        print("presk-numpy-peer: numpy is not installed", file=sys.stderr)
        return 77
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (a.n, a.n)).astype(np.float32)
    y = rng.uniform(-1, 1, (a.n, a.n)).astype(np.float32)
    z = np.empty((a.n, a.n), dtype=np.float32)
    np.matmul(x, y, out=z)
    us = []
    for _ in range(a.repeat):
        t0 = time.perf_counter_ns()
        np.matmul(x, y, out=z)
        us.append((time.perf_counter_ns() - t0) / 1e3)
    us.sort()
    m = len(us) // 2
    median = us[m] if len(us) % 2 else (us[m - 1] + us[m]) / 2
    gflops = 2.0 * a.n ** 3 / (median * 1e3)
    print(f"sgemm {a.n}^3 f32, 1 thread, median of {a.repeat}")
    blas = ""
    try:
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f", {cfg.get('name', '?')} {cfg.get('version', '?')}"
    except Exception:  # older numpy: no dict form of the configuration
        pass
    print(f"-- numpy {np.__version__}{blas}")
    print(f"{'peer':<24} {'median us':>12} {'GFLOP/s':>10}")
    print(f"{'numpy matmul':<24} {median:12.2f} {gflops:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
