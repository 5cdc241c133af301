#!/usr/bin/env python3
"""`presk run --out FILE.json` writes JSON that a JSON parser reads back, whatever the strings it
carries: the realization's spelling is written as given, so a realization file whose name holds
a quote, a backslash and a tab once made the file unreadable.

Usage: out_json.py --presk PRESK --examples DIR --work DIR. Exit 0 when the file parses and its
fields are the ones given, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--presk", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    odd = os.path.join(a.work, 'r"\\\t.json')
    with open(odd, "w") as f:
        f.write('{"default": "f32"}\n')
    out = os.path.join(a.work, "out.json")
    cmd = [a.presk, "run", os.path.join(a.examples, "tutorial/01_linear.psk"), "--entry", "Linear{3, 2}.apply",
           "--dim", "batch=2", "--backend", "kernel", "--realize", "@" + odd, "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print("presk failed:", p.stderr, file=sys.stderr)
        return 1
    try:
        with open(out) as f:
            o = json.load(f)
    except ValueError as e:
        print("--out is not JSON:", e, file=sys.stderr)
        return 1
    want = {"entry": "Linear{3,2}.apply", "backend": "kernel", "realization": "@" + odd}
    for k, v in want.items():
        if o.get(k) != v:
            print("%s: %r, expected %r" % (k, o.get(k), v), file=sys.stderr)
            return 1
    if len(o["outputs"]) != 1 or len(o["outputs"][0]["data"]) != 2 or "x" not in o["inputs"]:
        print("unexpected outputs or inputs:", o, file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
