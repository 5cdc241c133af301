#!/usr/bin/env python3
"""gk-server's chat page in headless Chromium: usage: test_chat_page.py GK_SERVER MODEL OUT_DIR.

Starts gk-server on MODEL with --port 0 and --api-key, and drives `chromium --headless=new`
over the DevTools protocol on --remote-debugging-pipe (fds 3 and 4, NUL-terminated JSON;
no websocket library needed): loads GET /, types the key and a message, clicks Send with
the mouse, waits for the page's data-state "done" and checks that the streamed assistant
text grew in steps and is in the DOM, with no error line; saves a screenshot to
OUT_DIR/chat_page.png (its path is printed). Then a second page without the key must
show the server's 401 in its error line and give the message back to the text box. Exit 77 (skipped) when neither `chromium` nor
`chromium-browser` is on PATH. Every wait has a timeout."""
import base64
import fcntl
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time

import checks
import server_process

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    print("SKIP: no chromium or chromium-browser on PATH (Debian: apt-get install chromium)")
    sys.exit(77)

SERVER, MODEL, OUT_DIR = sys.argv[1:4]
KEY = "page-key-456"
TEXT = "Tell me a story about a cat."
TIMEOUT = 180  # seconds for any one wait (a sanitizer build is slow)


class Browser:
    """Headless Chromium and the DevTools protocol on its pipe."""

    def __init__(self, profile):
        to_browser, self.browser_in = os.pipe()
        self.browser_out, from_browser = os.pipe()
        # Above fd 10 first, so that the dup2 to 3 and 4 in the child cannot overwrite one another.
        hi_in = fcntl.fcntl(to_browser, fcntl.F_DUPFD_CLOEXEC, 10)
        hi_out = fcntl.fcntl(from_browser, fcntl.F_DUPFD_CLOEXEC, 10)

        def fds():
            os.dup2(hi_in, 3)
            os.dup2(hi_out, 4)

        cmd = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
               "--remote-debugging-pipe", "--window-size=900,700", "--hide-scrollbars", f"--user-data-dir={profile}",
               "about:blank"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=fds)
        for fd in (to_browser, from_browser, hi_in, hi_out):
            os.close(fd)
        self.buf = b""
        self.next_id = 1

    def call(self, method, session=None, **params):
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self.next_id += 1
        os.write(self.browser_in, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + TIMEOUT
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == msg["id"]:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply["result"]
            sel = selectors.DefaultSelector()
            sel.register(self.browser_out, selectors.EVENT_READ)
            if time.time() > deadline or not sel.select(timeout=deadline - time.time()):
                raise RuntimeError(f"{method}: no answer from chromium in {TIMEOUT} s")
            data = os.read(self.browser_out, 1 << 20)
            if not data:
                raise RuntimeError(f"{method}: chromium closed its pipe")
            self.buf += data

    def open(self, url):
        target = self.call("Target.createTarget", url=url)["targetId"]
        return self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def js(self, session, expr):
        r = self.call("Runtime.evaluate", session, expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait(self, session, expr, what):
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            if self.js(session, expr):
                return True
            time.sleep(0.05)
        raise RuntimeError(f"timed out waiting for {what}")

    def type_into(self, session, element_id, text):
        self.js(session, f"document.getElementById('{element_id}').focus()")
        self.call("Input.insertText", session, text=text)

    def click(self, session, element_id):
        x, y = self.js(session, f"(() => {{ const r = document.getElementById('{element_id}').getBoundingClientRect();"
                                " return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session, type=kind, x=x, y=y, button="left", clickCount=1)

    def close(self):
        try:
            self.call("Browser.close")
        except RuntimeError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.browser_in)
        os.close(self.browser_out)


def main():
    check = checks.Checks()

    os.makedirs(OUT_DIR, exist_ok=True)
    shot = os.path.abspath(os.path.join(OUT_DIR, "chat_page.png"))
    if os.path.exists(shot):
        os.remove(shot)
    proc, port = server_process.start(SERVER, MODEL, ["-c", "128", "--api-key", KEY])
    try:
        with tempfile.TemporaryDirectory() as profile:
            b = Browser(profile)
            try:
                s = b.open(f"http://127.0.0.1:{port}/")
                b.wait(s, "document.readyState === 'complete' && !!document.getElementById('chat-form')", "the page")
                b.type_into(s, "api-key", KEY)
                b.type_into(s, "input", TEXT)
                # The reply's lengths as the page updates it: more than one means it was streamed.
                b.js(s, "window.lengths = []; new MutationObserver(() => {"
                        " const c = document.querySelector('.msg.assistant .content');"
                        " const n = c ? c.textContent.length : 0;"
                        " if (n && n !== window.lengths[window.lengths.length - 1]) window.lengths.push(n); })"
                        ".observe(document.getElementById('messages'), {subtree: true, childList: true,"
                        " characterData: true}); 0")
                b.click(s, "send")
                b.wait(s, "!['idle', 'busy'].includes(document.body.dataset.state)", "the reply")
                state = b.js(s, "document.body.dataset.state")
                seen = b.js(s, "window.lengths")
                user = b.js(s, "(document.querySelector('.msg.user .content') || {}).textContent")
                reply = b.js(s, "(document.querySelector('.msg.assistant .content') || {}).textContent")
                error = b.js(s, "document.getElementById('error').textContent")
                print(f"page state {state!r}; user {user!r}; assistant {reply!r}; error line {error!r}; "
                      f"the reply's lengths as it came: {seen}")
                check(state == "done", f"the page's state {state!r}, expected 'done'")
                check(user == TEXT, f"the user's message {user!r}")
                check(bool(reply and reply.strip()), "no streamed assistant text in the page")
                check(len(seen) >= 2, f"the reply did not grow in steps: lengths {seen}")
                check(error == "", f"error line {error!r}")
                png = base64.b64decode(b.call("Page.captureScreenshot", s, format="png")["data"])
                with open(shot, "wb") as f:
                    f.write(png)
                check(png.startswith(b"\x89PNG") and len(png) > 1000, f"screenshot of {len(png)} bytes")
                print("screenshot:", shot)

                # No key: the API call gets 401 and the page says so.
                s = b.open(f"http://127.0.0.1:{port}/index.html")
                b.wait(s, "document.readyState === 'complete' && !!document.getElementById('chat-form')", "the page")
                b.type_into(s, "input", "hi")
                b.click(s, "send")
                b.wait(s, "document.body.dataset.state === 'error'", "the error without the key")
                error = b.js(s, "document.getElementById('error').textContent")
                print(f"without the key: error line {error!r}")
                check("API key" in error, f"without the key: error line {error!r}")
                check(b.js(s, "document.querySelectorAll('.msg').length") == 0,
                      "without the key: a message is left in the list")
                check(b.js(s, "document.getElementById('input').value") == "hi",
                      "without the key: the message is not back in the text box")
            finally:
                b.close()
    except RuntimeError as e:
        check(False, str(e))
    finally:
        rc = server_process.stop(proc)
    check(rc == 0, f"SIGTERM: exit status {rc}")
    return check.report("chat page checks passed")


if __name__ == "__main__":
    sys.exit(main())
