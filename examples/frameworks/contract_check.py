#!/usr/bin/env python3
"""Checks a running app against CONTRACT.md, byte for byte.

Usage: contract_check.py http://127.0.0.1:PORT [--wait SECONDS] [--campaign FILE.toml]... [--db | --no-db | --db-down]

Sends every case of the contract (routes, validation failures, stripped keys, missing routes)
and compares the status, the body bytes and the pinned headers exactly. With --campaign, also
sends that campaign's [[scenario]] and [[negative]] requests and compares them with their
`expect`, as benchlab's conformance gate does, so a campaign file cannot drift from the
contract. The database routes are checked too with one of: --db, the app's DATABASE_URL names
a database seeded by db/seed.sh (each run inserts DB_INSERTS rows into orders); --no-db, the
app runs without DATABASE_URL; --db-down, its DATABASE_URL names a server that refuses
connections. Prints one line per difference and exits 1 if there is any, 0 when everything
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


# The database routes (CONTRACT.md, "Database routes").
INVALID_ID = b'{"error":"invalid id"}'
UNKNOWN_USER = b'{"error":"unknown user"}'
NO_DATABASE = b'{"error":"no database"}'
DATABASE_ERROR = b'{"error":"database error"}'


def answer(status, body):
    return (status, body, j(body))


def db_user(n):
    return b'{"id":%d,"name":"user-%d","email":"user-%d@example.com"}' % (n, n, n)


def order(name, request_body, expect):
    return (name, "POST", "/db/orders", JSON_HEADERS, request_body, expect)


ORDER = b'{"user_id":42,"item":"book","quantity":2}'
LONG_ORDER = b'{"user_id":10000,"item":"' + b"i" * 64 + b'","quantity":100}'
# Requests that pass validation, whatever the database holds.
VALID_DB_REQUESTS = [
    ("db-user-42", "GET", "/db/users/42", b""),
    ("db-user-missing", "GET", "/db/users/10001", b""),
    ("db-order", "POST", "/db/orders", ORDER),
    ("db-order-unknown-user", "POST", "/db/orders",
     b'{"user_id":10001,"item":"book","quantity":2}'),
]
INVALID_IDS = ["abc", "0", "-1", "+1", "042", "1.5", "1e3", "2147483648", "99999999999", "4x"]
INVALID_ORDERS = [
    ("order-missing-key", b'{"user_id":42,"item":"book"}'),
    ("order-user-string", b'{"user_id":"42","item":"book","quantity":2}'),
    ("order-user-fraction", b'{"user_id":4.5,"item":"book","quantity":2}'),
    ("order-user-zero", b'{"user_id":0,"item":"book","quantity":2}'),
    ("order-user-too-large", b'{"user_id":2147483648,"item":"book","quantity":2}'),
    ("order-user-null", b'{"user_id":null,"item":"book","quantity":2}'),
    ("order-item-empty", b'{"user_id":42,"item":"","quantity":2}'),
    ("order-item-too-long", b'{"user_id":42,"item":"' + b"i" * 65 + b'","quantity":2}'),
    ("order-item-number", b'{"user_id":42,"item":7,"quantity":2}'),
    ("order-quantity-zero", b'{"user_id":42,"item":"book","quantity":0}'),
    ("order-quantity-too-large", b'{"user_id":42,"item":"book","quantity":101}'),
    ("order-quantity-string", b'{"user_id":42,"item":"book","quantity":"2"}'),
    ("order-array", b"[]"),
    ("order-malformed", b'{"user_id":'),
    ("order-not-json", b"hello"),
]
# Answered the same with or without a database: validation comes first, and missing routes.
DB_VALIDATION_CASES = (
    [("db-user-invalid " + segment, "GET", "/db/users/" + segment, {}, b"",
      answer(422, INVALID_ID)) for segment in INVALID_IDS]
    + [order(name, body, answer(422, INVALID_BODY)) for name, body in INVALID_ORDERS]
    + [("missing " + method + " " + path, method, path, {}, b"", answer(404, NOT_FOUND))
       for method, path in [("GET", "/db/users/"), ("GET", "/db/users/42/orders"),
                            ("POST", "/db/users/42"), ("GET", "/db/orders"),
                            ("DELETE", "/db/orders"), ("GET", "/db/users")]]
)
# With the seeded database.
DB_CASES = [
    ("db-user-1", "GET", "/db/users/1", {}, b"", ok(db_user(1))),
    ("db-user-42", "GET", "/db/users/42", {}, b"", ok(db_user(42))),
    ("db-user-10000", "GET", "/db/users/10000", {}, b"", ok(db_user(10000))),
    ("db-user-missing", "GET", "/db/users/10001", {}, b"", answer(404, NOT_FOUND)),
    ("db-user-max", "GET", "/db/users/2147483647", {}, b"", answer(404, NOT_FOUND)),
    order("db-order", ORDER, answer(201, ORDER)),
    order("db-order-again", ORDER, answer(201, ORDER)),
    order("db-order-strip", b'{"quantity":2,"note":{"gift":true},"item":"book","user_id":42}',
          answer(201, ORDER)),
    order("db-order-limits", LONG_ORDER, answer(201, LONG_ORDER)),
    order("db-order-smallest", b'{"user_id":1,"item":"x","quantity":1}',
          answer(201, b'{"user_id":1,"item":"x","quantity":1}')),
    order("db-order-utf8", '{"user_id":7,"item":"café ☕","quantity":3}'.encode(),
          answer(201, '{"user_id":7,"item":"café ☕","quantity":3}'.encode())),
    order("db-order-unknown-user", b'{"user_id":10001,"item":"book","quantity":2}',
          answer(422, UNKNOWN_USER)),
    order("db-order-unknown-user-max", b'{"user_id":2147483647,"item":"book","quantity":2}',
          answer(422, UNKNOWN_USER)),
] + DB_VALIDATION_CASES
# The rows one --db run inserts into orders.
DB_INSERTS = sum(1 for case in DB_CASES if case[5][0] == 201)
# Without DATABASE_URL, and with a database that refuses connections.
NO_DB_CASES = [(name, method, path, JSON_HEADERS if body else {}, body, answer(503, NO_DATABASE))
               for name, method, path, body in VALID_DB_REQUESTS] + DB_VALIDATION_CASES
DB_DOWN_CASES = [(name, method, path, JSON_HEADERS if body else {}, body,
                  answer(500, DATABASE_ERROR))
                 for name, method, path, body in VALID_DB_REQUESTS] + DB_VALIDATION_CASES
DB_MODES = {"--db": DB_CASES, "--no-db": NO_DB_CASES, "--db-down": DB_DOWN_CASES}


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
    if len(argv) < 2 or argv[1].startswith("-"):
        print(usage, file=sys.stderr)
        return 2
    url = urllib.parse.urlsplit(argv[1])
    host, port = url.hostname or "127.0.0.1", url.port or 80
    wait, cases, db_mode = None, list(CASES), None
    args = argv[2:]
    while args:
        flag = args.pop(0)
        if flag in DB_MODES and db_mode is None:
            db_mode = flag
            cases += DB_MODES[flag]
        elif flag in ("--wait", "--campaign") and args:
            value = args.pop(0)
            if flag == "--wait":
                wait = float(value)
            else:
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
