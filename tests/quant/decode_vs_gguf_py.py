#!/usr/bin/env python3
"""Decode every gk type bit for bit against an independent reference.

The reference is the `gguf` package's numpy implementation (gguf.quants.dequantize)
wherever it implements the type; for the types it lacks, a numpy decoder written in
this file from the published block layout (named per type in REFERENCE_NOTE below).

Blocks: random bytes, all-zero blocks, and random blocks whose 16-bit fields are
overwritten with special f16 patterns (zero, subnormals, the largest finite values,
+-Inf, NaN), so every scale field meets the edge cases without this file knowing
where each format keeps its scales. NaN compares equal to NaN; everything else must
match bit for bit.

Exit 0 on success, 1 on a mismatch, 77 (skip) when numpy or gguf is missing.
"""
import argparse
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import gguf
    from gguf import quants
except ImportError as e:  # pragma: no cover
    print(f"SKIP: the gguf reference needs python3 with numpy and gguf ({e})")
    sys.exit(77)

T = gguf.GGMLQuantizationType

SPECIAL_F16 = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF,
               0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x3C00, 0xBC00, 0x3555]


def ref_decode_missing(name, raw, n_blocks):
    """Numpy decoders for the types gguf.quants lacks; None when there is none."""
    b = raw.reshape(n_blocks, -1)
    f16 = lambda col: b[:, col:col + 2].copy().view(np.float16).astype(np.float32)
    if name == "q8_1":   # d f16, s f16, qs[32] int8: x = d * q
        d = f16(0)
        q = b[:, 4:36].view(np.int8).astype(np.float32)
        return (d * q).reshape(-1)
    if name == "q8_k":   # d f32, qs[256] int8, bsums[16] int16: x = d * q
        d = b[:, 0:4].copy().view(np.float32)
        q = b[:, 4:260].view(np.int8).astype(np.float32)
        return (d * q).reshape(-1)
    if name == "q1_0":   # d f16, qs[16]: bit j%8 of qs[j/8] set -> d, clear -> -d
        d = f16(0)
        bits = np.unpackbits(b[:, 2:18], axis=1, bitorder="little").astype(bool)
        return np.where(bits, d, -d).astype(np.float32).reshape(-1)
    if name == "q2_0":   # d f16, qs[16]: q = bits 2*(j%4) of qs[j/4]; x = (q - 1) * d
        d = f16(0)
        shifts = np.array([0, 2, 4, 6], dtype=np.uint8)
        q = ((b[:, 2:18, None] >> shifts) & 3).reshape(n_blocks, 64)
        return ((q.astype(np.int32) - 1).astype(np.float32) * d).reshape(-1)
    if name == "i8":
        return raw.view(np.int8).astype(np.float32)
    if name == "i16":
        return raw.view(np.int16).astype(np.float32)
    if name == "i32":
        return raw.view(np.int32).astype(np.float32)
    if name == "i64":
        return raw.view(np.int64).astype(np.float32)
    if name == "f64":
        return raw.view(np.float64).astype(np.float32)
    return None


REFERENCE_NOTE = {
    "q8_1": "numpy decoder in this file (d * q; gguf.quants has no Q8_1)",
    "q8_k": "numpy decoder in this file (f32 d * q; gguf.quants has no Q8_K)",
    "q1_0": "numpy decoder in this file (sign bits * d; gguf 0.19 has no Q1_0 decoder)",
    "q2_0": "numpy decoder in this file ((q - 1) * d; gguf 0.19 has no Q2_0)",
    "i8": "numpy astype", "i16": "numpy astype", "i32": "numpy astype",
    "i64": "numpy astype", "f64": "numpy astype (f64 -> f32 round to nearest)",
}

ALL_TYPES = ["f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64",
             "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1",
             "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q8_k",
             "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m",
             "iq4_nl", "iq4_xs", "tq1_0", "tq2_0", "mxfp4", "nvfp4", "q1_0", "q2_0"]


# (elements, bytes) per block where gguf's table lacks the type or disagrees with the
# layout in ggml-common.h (gguf 0.19 still sizes Q8_1 with f32 d and s).
LAYOUT = {"q8_1": (32, 36), "q2_0": (64, 18)}


def layout(name):
    if name in LAYOUT:
        return LAYOUT[name]
    return quants.GGML_QUANT_SIZES[T[name.upper()]]


def make_blocks(rng, n_blocks, type_size):
    raw = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    n_zero = max(1, n_blocks // 100)
    raw[:n_zero] = 0
    # patch 16-bit aligned fields of a tenth of the blocks with special f16 values
    specials = np.array(SPECIAL_F16, dtype=np.uint16)
    sel = rng.choice(np.arange(n_zero, n_blocks), size=n_blocks // 10, replace=False)
    for i in sel:
        words = raw[i, : (type_size // 2) * 2].view(np.uint16)
        k = rng.integers(1, 4)
        pos = rng.choice(len(words), size=min(k, len(words)), replace=False)
        words[pos] = rng.choice(specials, size=len(pos))
    # and the very first bytes (where most formats keep their scale) of another tenth
    sel2 = rng.choice(np.arange(n_zero, n_blocks), size=n_blocks // 10, replace=False)
    if type_size >= 2:
        raw[sel2, 0:2] = rng.choice(specials, size=len(sel2)).view(np.uint8).reshape(-1, 2)
    return raw


def bits_equal(a, b):
    a = np.ascontiguousarray(a, dtype=np.float32)
    b = np.ascontiguousarray(b, dtype=np.float32)
    if a.shape != b.shape:
        return np.zeros(max(a.size, 1), dtype=bool)
    both_nan = np.isnan(a) & np.isnan(b)
    return both_nan | (a.view(np.uint32) == b.view(np.uint32))


def check_type(cli, name, n_blocks, rng, tmp):
    blck, tsize = layout(name)
    raw = make_blocks(rng, n_blocks, tsize)
    ref = None
    note = "gguf.quants.dequantize (gguf %s)" % getattr(gguf, "__version__", "?")
    if name in REFERENCE_NOTE:
        ref = ref_decode_missing(name, raw.reshape(-1), n_blocks)
        note = REFERENCE_NOTE[name]
    else:
        try:
            ref = quants.dequantize(raw.reshape(-1), T[name.upper()]).reshape(-1).astype(np.float32)
        except NotImplementedError:
            return "skip", f"no reference decoder for {name} in gguf {gguf.__version__ if hasattr(gguf, '__version__') else ''}"
    inp = os.path.join(tmp, name + ".bin")
    out = os.path.join(tmp, name + ".f32")
    raw.tofile(inp)
    n_per_row = blck * 64 if n_blocks % 64 == 0 else blck
    r = subprocess.run([cli, "decode", name, inp, out, str(n_per_row)], capture_output=True, text=True)
    if r.returncode != 0:
        return "fail", f"codec-cli: {r.stderr.strip()}"
    got = np.fromfile(out, dtype=np.float32)
    eq = bits_equal(got, ref)
    if not eq.all():
        bad = np.flatnonzero(~eq)
        i = int(bad[0])
        return "fail", (f"{len(bad)} of {ref.size} values differ; first at element {i} "
                        f"(block {i // blck}): ours {got[i]!r} ref {ref[i]!r}")
    return "ok", f"{n_blocks} blocks, reference: {note}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--codec-cli", required=True)
    ap.add_argument("--blocks", type=int, default=100_032)
    ap.add_argument("--types", default=",".join(ALL_TYPES))
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.types.split(","):
            status, msg = check_type(a.codec_cli, name, a.blocks, rng, tmp)
            print(f"{name:8s} {status:4s} {msg}")
            failed += status == "fail"
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
