"""gk-server as a child process for the server tests: started on a port the system picks,
its stderr drained, and stopped with SIGTERM."""
import selectors
import signal
import subprocess
import sys
import threading
import time


def start(server, model, args):
    """Starts `server -m model --port 0 args` and waits (at most 120 s) for its "listening on"
    line; returns (process, port). Exits the test with status 1 when it does not start."""
    p = subprocess.Popen([server, "-m", model, "--port", "0"] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    deadline = time.time() + 120
    line = ""
    while time.time() < deadline and not line:
        if sel.select(timeout=1):
            line = p.stdout.readline()
            if not line:
                break
    if "listening on http://" not in line:
        p.kill()
        print("gk-server did not start:", line, p.stderr.read(), file=sys.stderr)
        sys.exit(1)
    port = int(line.strip().rsplit(":", 1)[1])
    # Keep draining stderr so the server never blocks on a full pipe; its lines are kept
    # in p.err_lines (read them after stop()).
    p.err_lines = []
    p.drain = threading.Thread(target=lambda: [p.err_lines.append(l.rstrip("\n")) for l in p.stderr], daemon=True)
    p.drain.start()
    return p, port


def stop(p):
    """SIGTERM, then the exit status (killed and "hung" when it has not exited in 60 s)."""
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=60)
        p.drain.join(10)
        return rc
    except subprocess.TimeoutExpired:
        p.kill()
        return "hung"
