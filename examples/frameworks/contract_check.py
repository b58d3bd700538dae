#!/usr/bin/env python3
"""Checks a running app against CONTRACT.md, byte for byte.

Usage: contract_check.py http://127.0.0.1:PORT [--wait SECONDS] [--campaign FILE.toml]...

Sends every case of the contract (routes, validation failures, stripped keys, missing routes)
and compares the status, the body bytes and the pinned headers exactly. With --campaign, also
sends that campaign's [[scenario]] and [[negative]] requests and compares them with their
`expect`, as benchlab's conformance gate does, so a campaign file cannot drift from the
contract. Prints one line per difference and exits 1 if there is any, 0 when everything
matches. With --wait, first retries GET /health until it answers 200 or the time runs out
(exit 2).
"""
import http.client
import json
import pathlib
import sys
import time
import urllib.parse

HERE = pathlib.Path(__file__).resolve().parent
STATIC_4K = (HERE / "static" / "4k").read_bytes()
JSON_TYPE = "application/json; charset=utf-8"
INVALID_BODY = b'{"error":"invalid body"}'
INVALID_QUERY = b'{"error":"invalid query"}'
NOT_FOUND = b'{"error":"not found"}'
JSON_HEADERS = {"Content-Type": "application/json"}


def j(text):
    """A JSON response's pinned headers for a body."""
    return {"content-type": JSON_TYPE, "content-length": str(len(text))}


def ok(body):
    return (200, body, j(body))


def echo(name, request_body, expect):
    return (name, "POST", "/echo", JSON_HEADERS, request_body, expect)


# (name, method, path, request headers, request body, (status, body, pinned headers))
CASES = [
    ("health", "GET", "/health", {}, b"", ok(b'{"status":"ok"}')),
    ("json", "GET", "/json", {}, b"",
     ok(b'{"message":"Hello, World!","count":3,"items":["a","b","c"],"ok":true}')),
    ("user", "GET", "/users/42", {}, b"", ok(b'{"id":"42","name":"user-42"}')),
    ("user-word", "GET", "/users/alice", {}, b"", ok(b'{"id":"alice","name":"user-alice"}')),
    ("sum", "GET", "/sum?a=1&b=2&c=3", {}, b"", ok(b'{"a":1,"b":2,"c":3,"d":100,"sum":106}')),
    ("sum-defaults", "GET", "/sum", {}, b"", ok(b'{"a":0,"b":0,"c":10,"d":100,"sum":110}')),
    ("sum-all", "GET", "/sum?d=7&c=0&b=1000000&a=-5", {}, b"",
     ok(b'{"a":-5,"b":1000000,"c":0,"d":7,"sum":1000002}')),
    ("sum-other-key", "GET", "/sum?a=1&z=9", {}, b"", ok(b'{"a":1,"b":0,"c":10,"d":100,"sum":111}')),
    ("sum-not-number", "GET", "/sum?a=x", {}, b"", (422, INVALID_QUERY, j(INVALID_QUERY))),
    ("sum-fraction", "GET", "/sum?b=1.5", {}, b"", (422, INVALID_QUERY, j(INVALID_QUERY))),
    ("sum-too-large", "GET", "/sum?c=1000001", {}, b"", (422, INVALID_QUERY, j(INVALID_QUERY))),
    ("sum-too-small", "GET", "/sum?d=-1000001", {}, b"", (422, INVALID_QUERY, j(INVALID_QUERY))),
    echo("echo", b'{"name":"bench","count":3,"tags":["a","b"]}',
         ok(b'{"name":"bench","count":3,"tags":["a","b"]}')),
    echo("echo-strip", b'{"name":"bench","count":3,"tags":["a","b"],"admin":true}',
         ok(b'{"name":"bench","count":3,"tags":["a","b"]}')),
    echo("echo-reordered", b'{"extra":{"k":[1]},"tags":[],"count":0,"name":"x"}',
         ok(b'{"name":"x","count":0,"tags":[]}')),
    echo("echo-limits", b'{"name":"' + b"n" * 64 + b'","count":1000,"tags":['
         + b",".join([b'"' + b"t" * 32 + b'"'] * 8) + b"]}",
         ok(b'{"name":"' + b"n" * 64 + b'","count":1000,"tags":['
            + b",".join([b'"' + b"t" * 32 + b'"'] * 8) + b"]}")),
]
INVALID_ECHOES = [
    ("echo-missing-key", b'{"name":"bench","count":3}'),
    ("echo-count-string", b'{"name":"bench","count":"3","tags":[]}'),
    ("echo-count-fraction", b'{"name":"bench","count":1.5,"tags":[]}'),
    ("echo-count-negative", b'{"name":"bench","count":-1,"tags":[]}'),
    ("echo-count-too-large", b'{"name":"bench","count":1001,"tags":[]}'),
    ("echo-name-empty", b'{"name":"","count":3,"tags":[]}'),
    ("echo-name-too-long", b'{"name":"' + b"n" * 65 + b'","count":3,"tags":[]}'),
    ("echo-name-null", b'{"name":null,"count":3,"tags":[]}'),
    ("echo-tags-not-array", b'{"name":"bench","count":3,"tags":"a"}'),
    ("echo-tag-not-string", b'{"name":"bench","count":3,"tags":[1]}'),
    ("echo-tag-empty", b'{"name":"bench","count":3,"tags":[""]}'),
    ("echo-tag-too-long", b'{"name":"bench","count":3,"tags":["' + b"t" * 33 + b'"]}'),
    ("echo-too-many-tags", b'{"name":"bench","count":3,"tags":["a","a","a","a","a","a","a","a","a"]}'),
    ("echo-array", b"[]"),
    ("echo-malformed", b'{"name":'),
]
CASES += [echo(name, body, (422, INVALID_BODY, j(INVALID_BODY))) for name, body in INVALID_ECHOES]
CASES += [
    ("static", "GET", "/static/4k", {}, b"",
     (200, STATIC_4K, {"content-type": "application/octet-stream", "content-length": "4096"})),
]
MISSING = [("GET", "/"), ("GET", "/nope"), ("GET", "/static/nope"), ("GET", "/users/"),
           ("GET", "/users/42/posts"), ("POST", "/health"), ("GET", "/echo"), ("DELETE", "/json")]
CASES += [("missing " + method + " " + path, method, path, {}, b"", (404, NOT_FOUND, j(NOT_FOUND)))
          for method, path in MISSING]


def request(host, port, method, path, headers, body, timeout=5.0):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body if (body or method == "POST") else None,
                     headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read(), {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


def show(data):
    text = repr(data)
    return text if len(text) <= 120 else text[:117] + "..."


def campaign_cases(path):
    """The requests of a campaign file, in CASES' form (Python 3.11's tomllib reads it)."""
    import tomllib
    with open(path, "rb") as f:
        campaign = tomllib.load(f)
    cases = []
    for kind in ("scenario", "negative"):
        for entry in campaign.get(kind, []):
            expect = entry["expect"]
            body = expect.get("body")
            cases.append((f"{pathlib.Path(path).name} {kind} {entry['name']}",
                          entry.get("method", "GET"), entry["path"], entry.get("headers", {}),
                          entry.get("body", "").encode(),
                          (expect["status"], None if body is None else body.encode(),
                           {k.lower(): v for k, v in expect.get("headers", {}).items()})))
    return cases


def check(host, port, cases):
    failures = 0
    for name, method, path, headers, body, (status, expect_body, expect_headers) in cases:
        problems = []
        try:
            got_status, got_body, got_headers = request(host, port, method, path, headers, body)
        except OSError as e:
            problems.append(f"request failed: {e}")
        else:
            if got_status != status:
                problems.append(f"status: expected {status}, got {got_status}")
            if expect_body is not None and got_body != expect_body:
                problems.append(f"body: expected {show(expect_body)}, got {show(got_body)}")
            for key, value in expect_headers.items():
                if got_headers.get(key) != value:
                    problems.append(f"header {key}: expected {value!r}, got {got_headers.get(key)!r}")
        for problem in problems:
            print(f"FAIL {name} ({method} {path}): {problem}")
        failures += bool(problems)
    print(f"{len(cases) - failures} passed, {failures} failed")
    return failures == 0


def wait_ready(host, port, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if request(host, port, "GET", "/health", {}, b"", timeout=1.0)[0] == 200:
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def main(argv):
    usage = __doc__.strip().splitlines()[2]
    if len(argv) < 2 or len(argv) % 2 != 0:
        print(usage, file=sys.stderr)
        return 2
    url = urllib.parse.urlsplit(argv[1])
    host, port = url.hostname or "127.0.0.1", url.port or 80
    wait, cases = None, list(CASES)
    for flag, value in zip(argv[2::2], argv[3::2]):
        if flag == "--wait":
            wait = float(value)
        elif flag == "--campaign":
            cases += campaign_cases(value)
        else:
            print(usage, file=sys.stderr)
            return 2
    if wait is not None and not wait_ready(host, port, wait):
        print(f"no 200 from GET /health at {argv[1]} within {wait:g} s", file=sys.stderr)
        return 2
    return 0 if check(host, port, cases) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
