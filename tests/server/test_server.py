#!/usr/bin/env python3
"""gk-server end to end: usage: test_server.py GK_SERVER GK_RUN MODEL.

Starts gk-server on MODEL with --port 0 (the port is read from its first stdout line),
drives it with the official openai client (completions and chat, streamed and not) and
with urllib for the raw cases (the chat page at GET /, every error status with its JSON
body, the server still answering /health after each), compares temperature-0 text with
gk-run's, runs 8 clients x 10 requests at once on 4 slots batched together, and stops
the server with SIGTERM (exit status 0).
Exit 77 (skipped) when the openai package cannot be imported. Every wait has a timeout."""
import http.client
import json
import subprocess
import sys
import threading
import urllib.request

import checks
import http_json
import server_process

try:
    import openai
except ImportError:
    print("SKIP: the Python package 'openai' is not importable (pip install openai)")
    sys.exit(77)

SERVER, GK_RUN, MODEL = sys.argv[1:4]
KEY = "test-key-123"
CTX = 256
MAX_BODY = 65536
TIMEOUT = 120  # seconds for any one request (a sanitizer build is slow)

check = checks.Checks()


def gk_run_text(prompt, n):
    r = subprocess.run([GK_RUN, "-m", MODEL, "-p", prompt, "-n", str(n), "--temp", "0", "--no-display-prompt",
                        "--no-show-timings"], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("\n")
    return r.stdout[:-1]


def raw(port, method, path, body=None, key=KEY, data=None):
    """(status, parsed JSON body) of one request over a fresh connection."""
    return http_json.request(port, method, path, body, key, data, TIMEOUT)


def page(port, path):
    """(status, Content-Type, text) of a GET without a key."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=TIMEOUT) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode()


def healthy(port):
    status, body = raw(port, "GET", "/health", key=None)
    return status == 200 and body.get("status") == "ok"


def expect_error(port, status, method, path, body=None, key=KEY, data=None, what=""):
    got, j = raw(port, method, path, body, key, data)
    check(got == status, f"{what}: status {got}, expected {status}: {j}")
    err = j.get("error", {}) if isinstance(j, dict) else {}
    check(isinstance(err.get("message"), str) and err.get("message") and isinstance(err.get("type"), str)
          and err.get("code") == status, f"{what}: error body {j}")
    check(healthy(port), f"{what}: /health after it")


def bad_length(port, value):
    """(status, parsed JSON body) of a POST /tokenize whose Content-Length header is `value`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.putrequest("POST", "/tokenize")
        conn.putheader("Authorization", "Bearer " + KEY)
        conn.putheader("Content-Length", value)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def main():
    # The command line: an unknown option and a missing model are one-line errors.
    for args, text in ((["--bogus"], "unknown option --bogus"), (["--port", "8080"], "-m/--model is required")):
        r = subprocess.run([SERVER] + args, capture_output=True, text=True, timeout=TIMEOUT)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 1 and len(lines) == 1 and text in lines[0], f"gk-server {args}: {r.returncode} {lines}")

    proc, port = server_process.start(SERVER, MODEL, ["-c", str(CTX), "-np", "4", "--api-key", KEY, "--max-body", str(MAX_BODY)])
    try:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, timeout=TIMEOUT, max_retries=0)
        check(healthy(port), "/health")
        # The chat page: served without the key; its API calls still need one (the 401s below).
        for path in ("/", "/index.html"):
            status, ctype, text = page(port, path)
            check(status == 200 and ctype == "text/html; charset=utf-8", f"GET {path}: {status} {ctype}")
            check(text.startswith("<!DOCTYPE html>") and '<form id="chat-form">' in text and
                  "/v1/chat/completions" in text and text.rstrip().endswith("</html>"), f"GET {path}: the page")
        models = client.models.list()
        check([m.id for m in models.data] == ["stories260K.gguf"], f"/v1/models: {models}")

        # Temperature 0: gk-run's text, streamed or not.
        prompt, n = "Once upon a time", 40
        want = gk_run_text(prompt, n)
        c = client.completions.create(model="m", prompt=prompt, max_tokens=n, temperature=0)
        check(c.choices[0].text == want, f"completion {c.choices[0].text!r} != gk-run {want!r}")
        check(c.choices[0].finish_reason == "length", f"finish_reason {c.choices[0].finish_reason}")
        status, toks = raw(port, "POST", "/tokenize", {"content": prompt, "add_special": True})
        check(c.usage.prompt_tokens == len(toks["tokens"]) and c.usage.completion_tokens == n and
              c.usage.total_tokens == c.usage.prompt_tokens + n, f"usage {c.usage}")
        status, detok = raw(port, "POST", "/detokenize", {"tokens": toks["tokens"]})
        check(status == 200 and detok["content"] == prompt, f"/detokenize {detok}")
        pieces = [ch.choices[0].text for ch in
                  client.completions.create(model="m", prompt=prompt, max_tokens=n, temperature=0, stream=True)]
        check("".join(pieces) == want, f"streamed completion {''.join(pieces)!r} != {want!r}")

        # Stop strings: the text ends in front of the first one.
        stop = "Lily"
        if stop in want:
            for stream in (False, True):
                r = client.completions.create(model="m", prompt=prompt, max_tokens=n, temperature=0, stop=[stop, "zzz"],
                                              stream=stream)
                text = "".join(ch.choices[0].text for ch in r) if stream else r.choices[0].text
                check(text == want[:want.index(stop)], f"stop (stream={stream}): {text!r}")

        # Chat: the chatml conversation, the same text streamed or not, as the completion of its markup.
        msgs = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Tell me a story."}]
        chat = client.chat.completions.create(model="m", messages=msgs, max_tokens=24, temperature=0)
        reply = chat.choices[0].message.content
        check(chat.choices[0].message.role == "assistant" and chat.usage.completion_tokens > 0, f"chat {chat}")
        parts = []
        for ch in client.chat.completions.create(model="m", messages=msgs, max_tokens=24, temperature=0, stream=True,
                                                 stream_options={"include_usage": True}):
            if ch.choices and ch.choices[0].delta.content:
                parts.append(ch.choices[0].delta.content)
            if ch.usage:
                check(ch.usage.total_tokens == chat.usage.total_tokens, f"streamed usage {ch.usage}")
        check("".join(parts) == reply, f"streamed chat {''.join(parts)!r} != {reply!r}")
        markup = ("<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nTell me a story.<|im_end|>\n"
                  "<|im_start|>assistant\n")
        same = client.completions.create(model="m", prompt=markup, max_tokens=24, temperature=0)
        check(same.choices[0].text == reply, f"chat {reply!r} != completion of its markup {same.choices[0].text!r}")

        # A seed gives the same sampled text again.
        a, b = (client.completions.create(model="m", prompt=prompt, max_tokens=20, temperature=0.9, seed=7)
                .choices[0].text for _ in range(2))
        check(a == b, f"seed 7: {a!r} != {b!r}")

        # 8 clients x 10 requests at once on 4 slots, batched together step by step: each gets
        # its own prompt's text, whatever shares its steps (two clients send the same prompt).
        prompts = ["Tom had a red ball", "The cat sat", "Once upon a time, a dog", "Sue liked to",
                   "The sun was", "A little bird", "The cat sat", "Ben and Mia"]
        expected = {p: gk_run_text(p, 16) for p in set(prompts)}
        got = []

        def worker(p):
            cl = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, timeout=TIMEOUT, max_retries=0)
            for i in range(10):
                stream = i % 2 == 1
                r = cl.completions.create(model="m", prompt=p, max_tokens=16, temperature=0, stream=stream)
                got.append((p, "".join(ch.choices[0].text for ch in r) if stream else r.choices[0].text))

        threads = [threading.Thread(target=worker, args=(p,)) for p in prompts]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT * 3)
        check(len(got) == 80, f"concurrent: {len(got)} of 80 answers")
        for p, text in got:
            check(text == expected[p], f"concurrent {p!r}: {text!r} != {expected[p]!r}")

        # Errors: OpenAI's JSON body, a 4xx status, and the server goes on.
        comp = "/v1/completions"
        expect_error(port, 400, "POST", comp, data=b"{not json", what="malformed JSON")
        expect_error(port, 400, "POST", comp, data=b"[1, 2]", what="not an object")
        expect_error(port, 400, "POST", comp, {"max_tokens": 4}, what="no prompt")
        expect_error(port, 400, "POST", comp, {"prompt": 5}, what="prompt a number")
        expect_error(port, 400, "POST", comp, {"prompt": "x", "temperature": "hot"}, what="temperature a string")
        expect_error(port, 400, "POST", comp, {"prompt": "x", "max_tokens": "8"}, what="max_tokens a string")
        expect_error(port, 400, "POST", comp, {"prompt": "x", "max_tokens": -1}, what="negative max_tokens")
        expect_error(port, 400, "POST", comp, {"prompt": "x", "top_p": 2}, what="top_p 2")
        expect_error(port, 400, "POST", comp, {"prompt": "x", "stop": 5}, what="stop a number")
        expect_error(port, 400, "POST", comp, {"prompt": "x", "stream": "yes"}, what="stream a string")
        expect_error(port, 400, "POST", comp, {"prompt": [1, 99999]}, what="token outside the vocabulary")
        expect_error(port, 400, "POST", comp, {"prompt": "x", "n": 2}, what="n 2")
        expect_error(port, 400, "POST", comp, {"prompt": "x", "grammar": "root ::= \"a\""}, what="a grammar")
        expect_error(port, 400, "POST", comp, {"prompt": "x", "json_schema": {"type": "object"}}, what="a JSON schema")
        expect_error(port, 400, "POST", comp, {"prompt": "one two three " * 200}, what="prompt longer than the context")
        expect_error(port, 400, "POST", "/v1/chat/completions", {"messages": []}, what="no messages")
        expect_error(port, 400, "POST", "/v1/chat/completions", {"messages": [{"role": "tool", "content": "x"}]},
                     what="role tool")
        expect_error(port, 404, "GET", "/v1/nothing", what="unknown route")
        expect_error(port, 501, "POST", "/v1/embeddings", {"input": "x"}, what="embeddings without --embeddings")
        expect_error(port, 401, "GET", "/v1/models", key=None, what="no API key")
        expect_error(port, 401, "POST", comp, {"prompt": "x"}, key="wrong", what="wrong API key")
        expect_error(port, 401, "POST", "/tokenize", {"content": "x"}, key=None, what="no API key, /tokenize")
        expect_error(port, 413, "POST", comp, data=json.dumps({"prompt": "a" * (2 * MAX_BODY)}).encode(),
                     what="body over --max-body")
        # A Content-Length that is not a byte count: 400 at once, not httplib's 413 after its
        # read timeout.
        for value in ("-5", "12x", "+3"):
            status, j = bad_length(port, value)
            check(status == 400 and f"Content-Length '{value}' is not a byte count" in j.get("error", {}).get("message", ""),
                  f"Content-Length {value}: {status} {j}")
        check(healthy(port), "/health after the bad Content-Length")
        try:
            client.completions.create(model="m", prompt="x", max_tokens=-5)
            check(False, "openai client: negative max_tokens accepted")
        except openai.BadRequestError as e:
            check(e.status_code == 400, f"openai client: {e}")
        bad = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="nope", timeout=TIMEOUT, max_retries=0)
        try:
            bad.models.list()
            check(False, "openai client: a wrong key accepted")
        except openai.AuthenticationError as e:
            check(e.status_code == 401, f"openai client: {e}")
        c = client.completions.create(model="m", prompt=prompt, max_tokens=n, temperature=0)
        check(c.choices[0].text == want, "the same completion after the errors")
    finally:
        rc = server_process.stop(proc)
    check(rc == 0, f"SIGTERM: exit status {rc}")
    # How the slots shared their steps (continuous batching): reported, not asserted, as it
    # depends on timing; the texts above are the same whatever it was.
    print("\n".join(l for l in proc.err_lines if "forward steps" in l))

    return check.report("all gk-server checks passed")


if __name__ == "__main__":
    sys.exit(main())
