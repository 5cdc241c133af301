"""One JSON request to a local gk-server for the server tests: the status and the parsed
body, error statuses included."""
import json
import urllib.error
import urllib.request


def request(port, method, path, body=None, key=None, data=None, timeout=120):
    """(status, parsed JSON body) of `method path` on 127.0.0.1:port over a fresh
    connection; `body` is sent as JSON unless raw bytes are given in `data`; `key`, when
    given, as "Authorization: Bearer KEY"."""
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    if data is None and body is not None:
        data = json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
