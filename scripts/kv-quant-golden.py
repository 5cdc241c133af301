#!/usr/bin/env python3
"""The expected bytes of tests/core/test-kv-quant.cpp's RefEncoders test: the row encoders
ggml's CPU backend stores with on x86: the reference encoders (quantize_row_*_ref) of q4_0,
q4_1, q5_0 and q5_1 as gguf-py computes them (gguf.quants, written to match ggml-quants.c
bit for bit), q8_0 by its x86 rule (q8_0_x86 below), and iq4_nl by a direct float32
transcription of ggml's quantize_row_iq4_nl_ref (gguf-py has no iq4_nl encoder),
over the inputs the test generates. Prints one FNV-1a 64 hash per type.

Usage: python3 scripts/kv-quant-golden.py   (needs numpy and gguf)
"""
import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.quants import quantize

N_BLOCKS = 24
MASK64 = (1 << 64) - 1


def inputs():
    """The test's inputs: 24 blocks of 32 float32 values, each exact (a 24-bit integer
    times a power of two). Blocks 0-5 are edge cases, the rest random at scales 2^-3..2^3."""
    state = 0x9E3779B97F4A7C15
    out = []
    for b in range(N_BLOCKS):
        block = []
        for j in range(32):
            state = (state * 6364136223846793005 + 1442695040888963407) & MASK64
            u = (state >> 40) - (1 << 23)  # in [-2^23, 2^23)
            block.append(u)
        if b == 0:
            vals = [0.0] * 32
        elif b == 1:
            vals = [0.25] * 32
        elif b == 2:  # +-0.75 tie for the largest magnitude: the first one (element 3) wins
            vals = [u * 2.0**-25 for u in block]
            vals[3], vals[20] = 0.75, -0.75
        elif b == 3:
            vals = [u * 2.0**-53 for u in block]  # tiny: f16 scales underflow
        elif b == 4:
            vals = [u * 2.0**-9 for u in block]  # up to 16384
        elif b == 5:  # the largest magnitude is negative
            vals = [u * 2.0**-24 for u in block]
            vals[7] = -1.5
        else:
            vals = [u * 2.0 ** (-23 + (b % 7) - 3) for u in block]
        out.extend(vals)
    return np.array(out, dtype=np.float32)


def fnv1a(data):
    h = 0xCBF29CE484222325
    for c in data:
        h = ((h ^ c) * 0x100000001B3) & MASK64
    return h


KVALUES = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]


def iq4_nl_ref(x):
    f = np.float32
    out = bytearray()
    for b in range(len(x) // 32):
        xb = x[32 * b: 32 * b + 32]
        amax, mx = f(0), f(0)
        for v in xb:
            if abs(v) > amax:
                amax, mx = abs(v), v
        codes = [0] * 32
        d = f(0)
        if not amax < f(1e-15):
            d0 = mx / f(KVALUES[0])
            idv = f(1) / d0
            sumqx, sumq2 = f(0), f(0)
            for j, v in enumerate(xb):
                al = idv * v
                al2 = al + al
                idx = 0
                step = 8
                while step > 0:  # ggml's branchless search over the doubled midpoints
                    k = idx + step
                    if al2 >= f(KVALUES[k - 1] + KVALUES[k]):
                        idx = k
                    step >>= 1
                codes[j] = idx
                q = f(KVALUES[idx])
                w = v * v
                sumqx = sumqx + w * q * v
                sumq2 = sumq2 + w * q * q
            d = sumqx / sumq2 if sumq2 > 0 else f(0)
        out += np.array([d], dtype=np.float32).astype(np.float16).tobytes()
        out += bytes(codes[j] | (codes[j + 16] << 4) for j in range(16))
    return bytes(out)


def q8_0_x86(x):
    """ggml-cpu's quantize_row_q8_0 on x86 (its from_float for q8_0, what set_rows stores):
    id = 127 / max|x| in float32, products rounded to nearest with ties to even."""
    f = np.float32
    out = bytearray()
    for b in range(len(x) // 32):
        xb = x[32 * b: 32 * b + 32].astype(np.float32)
        amax = f(np.max(np.abs(xb)))
        idv = f(127) / amax if amax != 0 else f(0)
        q = np.rint(xb * idv).astype(np.int8)
        out += np.array([amax / f(127)], dtype=np.float32).astype(np.float16).tobytes() + q.tobytes()
    return bytes(out)


def main():
    x = inputs()
    with np.errstate(all="ignore"):
        for name, qt in [("q4_0", T.Q4_0), ("q4_1", T.Q4_1), ("q5_0", T.Q5_0), ("q5_1", T.Q5_1)]:
            print(f"{name} 0x{fnv1a(quantize(x.reshape(1, -1), qt).tobytes()):016X}")
        print(f"q8_0 0x{fnv1a(q8_0_x86(x)):016X}")
        print(f"iq4_nl 0x{fnv1a(iq4_nl_ref(x)):016X}")


if __name__ == "__main__":
    main()
