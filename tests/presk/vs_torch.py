#!/usr/bin/env python3
"""presk's exact interpreter against an independent float64 PyTorch computation.

Runs `presk run ... --out FILE.json` (256-bit MPFR) on
  - MiniGPT{16, 8, 2, 2}.apply (examples/minigpt.psk with its head drawn normal(0, 0.5)
    instead of zeros, so that the logits depend on every layer), B=2, T=4;
  - MLP{2, 4, 1}.loss and .loss_grad (examples/tutorial/02_mlp_regression.psk), batch=3;
reads the parameters and synthesised inputs presk used from the same file, computes the
same functions with torch in float64 (written here from docs/language.md, not from presk's
code; the gradient by torch.autograd) and requires every output tensor to agree to 1e-12
relative to its largest magnitude.

Exit 0 on agreement, 1 on a mismatch or a presk failure, 77 (skip) when torch cannot be
imported (by this interpreter, nor by Debian's /usr/bin/python3 with python3-torch).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

DEBIAN_PYTHON = "/usr/bin/python3"
TOL = 1e-12


def import_torch():
    try:
        import torch  # noqa: F401
        return torch
    except ImportError:
        pass
    # Debian's python3-torch lives in the system interpreter, which may not be the one on PATH.
    if (os.path.exists(DEBIAN_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON)
            and not os.environ.get("PRESK_VS_TORCH_REEXEC")):
        env = dict(os.environ, PRESK_VS_TORCH_REEXEC="1")
        probe = subprocess.run([DEBIAN_PYTHON, "-c", "import torch"], capture_output=True, env=env)
        if probe.returncode == 0:
            os.execve(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv, env)
    print("SKIP: torch is not importable (apt-get install python3-torch, or pip install torch)")
    sys.exit(77)


def presk_run(args, file, entry, dims, tag):
    """Runs one entry with presk; returns its --out JSON (params, inputs, outputs)."""
    out = os.path.join(args.work, tag + ".json")
    cmd = [args.presk, "run", file, "--entry", entry, "--backend", "interp", "--bits", "256",
           "--seed", "7", "--digits", "40", "--out", out]
    for k, v in dims.items():
        cmd += ["--dim", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr}")
        sys.exit(1)
    with open(out) as f:
        return json.load(f)


class Checker:
    def __init__(self, torch):
        self.torch = torch
        self.failures = 0

    def tensor(self, v, dtype=None):
        return self.torch.tensor(v["data"], dtype=dtype or self.torch.float64)

    def compare(self, name, presk_value, torch_value):
        p = self.tensor(presk_value)
        t = torch_value.detach().to(self.torch.float64)
        if p.shape != t.shape:
            print(f"FAIL {name}: shape {tuple(p.shape)} (presk) vs {tuple(t.shape)} (torch)")
            self.failures += 1
            return
        scale = float(p.abs().max())
        err = float((p - t).abs().max())
        rel = err / scale if scale > 0 else err
        ok = rel <= TOL
        print(f"{'ok  ' if ok else 'FAIL'} {name}: shape {tuple(p.shape)}, max |presk - torch| = {err:.3e}, "
              f"relative to max |presk| = {scale:.3e}: {rel:.3e} (tolerance {TOL:g})")
        self.failures += not ok


def mlp_case(args, chk):
    torch = chk.torch
    file = os.path.join(args.examples, "tutorial", "02_mlp_regression.psk")
    dims = {"batch": 3}
    loss_run = presk_run(args, file, "MLP{2, 4, 1}.loss", dims, "mlp-loss")
    grad_run = presk_run(args, file, "MLP{2, 4, 1}.loss_grad", dims, "mlp-loss-grad")
    for key in ("params", "inputs"):
        if loss_run[key] != grad_run[key]:
            print(f"FAIL: loss and loss_grad were given different {key} (same seed)")
            sys.exit(1)
    P = loss_run["params"]
    w = {f"{l}.{n}": chk.tensor(P[l][n]).requires_grad_() for l in ("l1", "l2") for n in ("w", "b")}
    x = chk.tensor(loss_run["inputs"]["x"])
    y = chk.tensor(loss_run["inputs"]["y"])
    pred = torch.tanh(x @ w["l1.w"] + w["l1.b"]) @ w["l2.w"] + w["l2.b"]
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    chk.compare("MLP{2, 4, 1}.loss", loss_run["outputs"][0], loss)
    G = grad_run["outputs"][0]
    for key, t in w.items():
        l, n = key.split(".")
        chk.compare(f"MLP{{2, 4, 1}}.loss_grad .{key}", G[l][n], t.grad)


def layer_norm(x, p, eps):
    xc = x - x.mean(-1, keepdim=True)
    var = (xc * xc).mean(-1, keepdim=True)
    return xc / (var + eps).sqrt() * p["g"] + p["b"]


def linear(x, p):
    return x @ p["w"] + p["b"]


def layer(stack, i):
    """Layer i of a stack[n] parameter tree (every leaf has a leading axis n)."""
    return {k: layer(v, i) for k, v in stack.items()} if isinstance(stack, dict) else stack[i]


def minigpt_case(args, chk):
    torch = chk.torch
    V, D, H, L, B, T = 16, 8, 2, 2, 2, 4
    with open(os.path.join(args.examples, "minigpt.psk")) as f:
        text = f.read()
    text, n = re.subn(r"(param head\s*:\s*\[D, V\]\s*=\s*)normal\(0, head_std\)", r"\1normal(0, 0.5)", text)
    if n != 1:
        print("FAIL: the head declaration of examples/minigpt.psk was not found")
        sys.exit(1)
    file = os.path.join(args.work, "minigpt-head.psk")
    with open(file, "w") as f:
        f.write(text)
    run = presk_run(args, file, f"MiniGPT{{{V}, {D}, {H}, {L}}}.apply", {"B": B, "T": T}, "minigpt-apply")
    eps = 0.00001
    P = run["params"]

    def tree(v):
        if isinstance(v, dict) and "data" in v and "type" in v:
            return chk.tensor(v)
        return {k: tree(u) for k, u in v.items()}

    p = tree(P)
    ids = torch.tensor(run["inputs"]["ids"]["data"], dtype=torch.long)
    x = p["tok"][ids] + p["pos"][torch.arange(T)]
    dh = D // H
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for i in range(L):
        blk = layer(p["blocks"], i)
        a = blk["attn"]
        h = layer_norm(x, blk["ln1"], eps)

        def heads(t):
            return t.reshape(B, T, H, dh).transpose(1, 2)

        q, k, v = heads(linear(h, a["q"])), heads(linear(h, a["k"])), heads(linear(h, a["v"]))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        s = s.masked_fill(~causal, float("-inf"))
        att = torch.softmax(s, dim=-1) @ v
        x = x + linear(att.transpose(1, 2).reshape(B, T, D), a["o"])
        u = linear(layer_norm(x, blk["ln2"], eps), blk["up"])
        gelu = u * (1 + torch.erf(u / math.sqrt(2))) / 2
        x = x + linear(gelu, blk["down"])
    logits = layer_norm(x, p["ln_f"], eps) @ p["head"]
    if float(p["head"].abs().max()) == 0:
        print("FAIL: the head is still zero")
        sys.exit(1)
    chk.compare(f"MiniGPT{{{V}, {D}, {H}, {L}}}.apply (head normal(0, 0.5))", run["outputs"][0], logits)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presk", required=True, help="the presk-cli executable")
    ap.add_argument("--examples", required=True, help="the examples/ folder")
    ap.add_argument("--work", required=True, help="a scratch folder for the JSON files")
    args = ap.parse_args()
    torch = import_torch()
    os.makedirs(args.work, exist_ok=True)
    chk = Checker(torch)
    mlp_case(args, chk)
    minigpt_case(args, chk)
    if chk.failures:
        print(f"{chk.failures} comparison(s) failed")
        return 1
    print("presk agrees with torch (float64) to 1e-12 relative")
    return 0


if __name__ == "__main__":
    sys.exit(main())
