#!/usr/bin/env python3
"""gk-server's /v1/embeddings: usage: test_embeddings.py GK_SERVER MODEL REFERENCE.json.

For each pooling (mean, cls, last) starts gk-server on MODEL (stories260K) with
--embeddings, an f32 KV cache, 2 slots and micro-batches of 4 tokens (a long input spans
several steps), and compares its vectors with llama-server's, recorded by
scripts/record-embeddings in REFERENCE.json (within 1e-5 of each component; both sides
compute in f32 and differ by about 1e-7). With mean pooling it also checks: the openai
client (which asks for base64) gets the same bits as "float"; an input gives the same bits
alone, in a list and while other clients' inputs share its steps (batch invariance); token
ids and text give the same vector; usage counts the tokens; every malformed request is a
400 with OpenAI's error body and the server goes on.
Exit 77 (skipped) when the openai package cannot be imported. Every wait has a timeout."""
import json
import sys
import threading

import checks
import http_json
import server_process

try:
    import openai
except ImportError:
    print("SKIP: the Python package 'openai' is not importable (pip install openai)")
    sys.exit(77)

SERVER, MODEL, REFERENCE = sys.argv[1:4]
TIMEOUT = 120
CTX = 256

check = checks.Checks()
ref = json.load(open(REFERENCE))
INPUTS = ref["inputs"]


def post(port, body):
    """(status, parsed JSON) of POST /v1/embeddings."""
    return http_json.request(port, "POST", "/v1/embeddings", body, timeout=TIMEOUT)


def vectors(port, inputs):
    status, j = post(port, {"input": inputs, "encoding_format": "float"})
    check(status == 200, f"embeddings {inputs!r}: status {status} {j}")
    if status != 200:
        return [], j
    check([d["index"] for d in j["data"]] == list(range(len(j["data"]))) and
          all(d["object"] == "embedding" for d in j["data"]) and j["object"] == "list", f"response shape {j}")
    return [d["embedding"] for d in j["data"]], j


def close(a, b, tol=1e-5):
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) <= tol


def check_pooling(pooling):
    proc, port = server_process.start(SERVER, MODEL, ["--embeddings", "--pooling", pooling, "-c", str(CTX), "-np", "2",
                                                      "-ub", "4", "-ctk", "f32", "-ctv", "f32"])
    try:
        want = ref["pooling"][pooling]
        got, j = vectors(port, INPUTS)
        check(len(got) == len(INPUTS), f"{pooling}: {len(got)} vectors for {len(INPUTS)} inputs")
        for i, (g, w) in enumerate(zip(got, want["vectors"])):
            diff = max(abs(x - y) for x, y in zip(g, w)) if len(g) == len(w) else float("inf")
            check(diff <= 1e-5, f"{pooling}: input {i}: max |gk - llama-server| = {diff}")
            norm = sum(x * x for x in g) ** 0.5
            check(abs(norm - 1) < 1e-5, f"{pooling}: input {i}: length {norm}")
        check(j.get("usage", {}).get("prompt_tokens") == want["prompt_tokens"] and
              j["usage"]["total_tokens"] == want["prompt_tokens"], f"{pooling}: usage {j.get('usage')}")
        if pooling == "mean":
            check_mean(port, got)
    finally:
        rc = server_process.stop(proc)
    check(rc == 0, f"{pooling}: SIGTERM: exit status {rc}")


def check_mean(port, batch):
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", timeout=TIMEOUT, max_retries=0)
    r = client.embeddings.create(model="m", input=INPUTS[:3])
    check([d.embedding for d in r.data] == batch[:3], "openai client (base64) != float")
    check(r.usage.prompt_tokens > 0, f"openai client usage {r.usage}")
    # Alone, in a list, and with other clients' inputs in the same steps: the same bits.
    for i, inp in enumerate(INPUTS):
        alone, _ = vectors(port, inp)
        check(alone == [batch[i]], f"input {i} alone differs from input {i} in a list")
    status, tokenized = http_json.request(port, "POST", "/tokenize",
                                          {"content": INPUTS[1], "add_special": True, "parse_special": True},
                                          timeout=TIMEOUT)
    check(status == 200, f"/tokenize: {status} {tokenized}")
    toks = tokenized.get("tokens", [])
    by_ids, _ = vectors(port, [toks])
    check(by_ids == [batch[1]], "token ids and their text give different vectors")
    results = []

    def worker(i):
        for _ in range(3):
            v, _ = vectors(port, INPUTS[i])
            results.append((i, v))

    threads = [threading.Thread(target=worker, args=(i % len(INPUTS),)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT * 3)
    check(len(results) == 18, f"concurrent: {len(results)} of 18 answers")
    for i, v in results:
        check(v == [batch[i]], f"concurrent: input {i} changed with what shared its steps")

    # Bad requests: 400 with OpenAI's error body, and the server goes on.
    for body, what in (({}, "no input"), ({"input": []}, "empty array"), ({"input": 5}, "a number"),
                       ({"input": [[]]}, "an empty token list"), ({"input": [1, 99999]}, "token outside the vocabulary"),
                       ({"input": ["x", 3]}, "a number in a list of strings"),
                       ({"input": "x", "encoding_format": "hex"}, "encoding_format hex"),
                       ({"input": "x", "dimensions": 7}, "dimensions 7"),
                       ({"input": "one two three " * 200}, "input longer than the context")):
        status, j = post(port, body)
        err = j.get("error", {}) if isinstance(j, dict) else {}
        check(status == 400 and isinstance(err.get("message"), str) and err.get("code") == 400,
              f"{what}: {status} {j}")
    after, _ = vectors(port, INPUTS)
    check(after == batch, "the same vectors after the errors")


def main():
    for pooling in ("mean", "cls", "last"):
        check_pooling(pooling)
    return check.report("all gk-server embedding checks passed")


if __name__ == "__main__":
    sys.exit(main())
