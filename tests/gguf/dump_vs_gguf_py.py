#!/usr/bin/env python3
"""Every tensor of every GGUF file under the given folders, decoded by `gk-gguf --dump`,
must equal bit for bit what the gguf Python package's GGUFReader reads and
gguf.quants.dequantize decodes (NaN matches NaN).

Files that GGUFReader cannot read either must be refused by gk-gguf too (exit 1, one
line). A tensor whose type has no decoder yet in gk, or none in gguf-py, is reported
as skipped. Exit 0 when everything decoded matches, 1 on a mismatch, 77 (skip) when
numpy or gguf is missing or a folder given is not there.

    dump_vs_gguf_py.py --gk-gguf PATH DIR [DIR ...]
"""
import argparse
import os
import subprocess
import sys

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as Q
except ImportError as e:  # pragma: no cover
    print(f"SKIP: needs python3 with numpy and gguf ({e})")
    sys.exit(77)

# Plain integer and f64 tensors: gguf.quants has no decoder; numpy's conversion is
# the reference (f64 -> f32 rounds to nearest).
ASTYPE = {Q.I8: np.int8, Q.I16: np.int16, Q.I32: np.int32, Q.I64: np.int64, Q.F64: np.float64}


def reference(t):
    raw = np.ascontiguousarray(t.data)
    if t.tensor_type in ASTYPE:
        return raw.view(ASTYPE[t.tensor_type]).astype(np.float32).reshape(-1)
    return gguf.quants.dequantize(raw.view(np.uint8), t.tensor_type).astype(np.float32).reshape(-1)


def same_bits(a, b):
    if a.shape != b.shape:
        return False, f"{a.size} values vs {b.size}"
    eq = (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
    if eq.all():
        return True, ""
    i = int(np.flatnonzero(~eq)[0])
    return False, f"{int((~eq).sum())} of {a.size} differ; first at {i}: gk {a[i]!r}, gguf-py {b[i]!r}"


def tensor_count(path):
    """n_tensors from a v2/v3 header, or None for anything else."""
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) == 24 and head[:4] == b"GGUF" and int.from_bytes(head[4:8], "little") in (2, 3):
        return int.from_bytes(head[8:16], "little")
    return None


def check_file(tool, path):
    """Returns (matched, skipped, failures)."""
    if tensor_count(path) == 0:  # nothing to decode (GGUFReader is slow on big vocabularies)
        r = subprocess.run([tool, path], capture_output=True, text=True)
        if r.returncode != 0:
            return 0, 0, [f"{path}: gk-gguf refuses a file without tensors: {r.stderr.strip()}"]
        return 0, 0, []
    try:
        reader = gguf.GGUFReader(path)
    except Exception as e:  # gguf-py refuses it: so must gk-gguf
        r = subprocess.run([tool, path], capture_output=True, text=True)
        if r.returncode == 0:
            return 0, 0, [f"{path}: gguf-py refuses it ({e}) but gk-gguf reads it"]
        print(f"  refused by both: {r.stderr.strip()}")
        return 0, 0, []
    matched, skipped, failures = 0, 0, []
    for t in reader.tensors:
        r = subprocess.run([tool, "--dump", t.name, path], capture_output=True)
        err = r.stderr.decode(errors="replace").strip()
        if r.returncode != 0:
            if "no decoder for" in err:
                print(f"  skip {t.name} ({t.tensor_type.name}): {err}")
                skipped += 1
            else:
                failures.append(f"{path}: {t.name}: gk-gguf failed: {err}")
            continue
        try:
            ref = reference(t)
        except NotImplementedError as e:
            print(f"  skip {t.name}: gguf-py cannot decode it ({e})")
            skipped += 1
            continue
        ok, why = same_bits(np.frombuffer(r.stdout, dtype=np.float32), ref)
        if ok:
            matched += 1
        else:
            failures.append(f"{path}: {t.name} ({t.tensor_type.name}): {why}")
    return matched, skipped, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gk-gguf", required=True)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    missing = [d for d in a.dirs if not os.path.isdir(d)]
    if missing:
        print(f"SKIP: no folder {', '.join(missing)}")
        sys.exit(77)
    files = sorted(os.path.join(root, f) for d in a.dirs for root, _, names in os.walk(d)
                   for f in names if f.endswith(".gguf"))
    total_matched, total_skipped, failures = 0, 0, []
    for path in files:
        m, s, f = check_file(a.gk_gguf, path)
        print(f"{path}: {m} tensors bit-identical, {s} skipped, {len(f)} failed")
        total_matched += m
        total_skipped += s
        failures += f
    for f in failures:
        print("FAIL", f)
    print(f"{len(files)} files, {total_matched} tensors bit-identical, {total_skipped} skipped, "
          f"{len(failures)} failures")
    sys.exit(1 if failures or not files else 0)


if __name__ == "__main__":
    main()
