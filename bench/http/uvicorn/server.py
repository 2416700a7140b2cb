#!/usr/bin/env python3
"""cell-http-uvicorn: the bench/http workloads as a plain ASGI app on uvicorn.

Usage: python3 server.py PORT

`app` is a bare ASGI callable (no framework) serving the five workloads of
bench/http/README.md: GET / (plain text), GET /json (a serialised message),
GET /users/{id} (an unsigned 64-bit id echoed), POST /users (a JSON body bound
to a typed record and echoed) and POST /minimal/users/{id} (both: the id
merged into the bound record). Unknown paths are 404, a wrong method on a
known path is 405 with Allow.

main() binds 127.0.0.1:PORT itself (SO_REUSEADDR) and hands the socket to
uvicorn: one worker, uvicorn's pure-Python h11 parser, the asyncio loop
(which sets TCP_NODELAY on every accepted socket), no access log, log level
warning, no lifespan, no websockets. SIGTERM or SIGINT exits 0 at once.
The code reads no environment (every uvicorn setting that would fall back to
an environment variable is given explicitly).
"""

import dataclasses
import json
import os
import signal
import socket
import sys

HELLO = b"hello, world\n"
NOT_FOUND = b"not found\n"
NOT_ALLOWED = b"method not allowed\n"
BAD_REQUEST = b"bad request\n"
TOO_LARGE = b"payload too large\n"
UNSUPPORTED = b"unsupported media type\n"

TEXT = b"text/plain"
JSON = b"application/json"
CLOSE = ((b"connection", b"close"),)

MAX_BODY = 64 * 1024  # a larger POST /users or /minimal/users/{id} body is refused with 413
U64 = 1 << 64


@dataclasses.dataclass(slots=True)
class User:
    """The post-json record."""

    name: str
    age: int  # unsigned 64-bit
    adult: bool


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")  # json.loads would take NaN and Infinity


def bind_user(body):
    """The body bound to a User, or None when it does not fit the record."""
    try:
        obj = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError too
        return None
    if type(obj) is not dict:
        return None
    name, age, adult = obj.get("name"), obj.get("age"), obj.get("adult")
    # Exact types: bool is a subclass of int, and a float age is no integer.
    if type(name) is not str or type(age) is not int or type(adult) is not bool:
        return None
    if not 0 <= age < U64:
        return None
    try:
        name.encode("utf-8")  # a lone surrogate ("\ud800") is not text
    except UnicodeEncodeError:
        return None
    return User(name, age, adult)


def parse_id(digits):
    """The {id} of /users/{id} or /minimal/users/{id}: ASCII digits fitting u64, or None."""
    if not (0 < len(digits) <= 20 and digits.isascii() and digits.isdigit()):
        return None
    n = int(digits)
    return n if n < U64 else None


def dumps(obj):
    """Serialised at request time, compact as the other servers write it."""
    return json.dumps(obj, separators=(",", ":")).encode()


async def reply(send, status, body, ctype=TEXT, extra=()):
    # Content-Length on every response, so uvicorn never chunks.
    headers = [(b"content-type", ctype), (b"content-length", b"%d" % len(body)), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def read_body(scope, receive):
    """The whole request body, None if it runs past MAX_BODY, or False if the
    client went away first."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            # h11 has checked it is digits (and that repeats agree).
            if int(value) > MAX_BODY:
                return None  # not read: the 413 closes the connection
            break
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return False  # http.disconnect
        body += message.get("body", b"")
        if len(body) > MAX_BODY:  # a chunked body has no Content-Length
            return None
        if not message.get("more_body", False):
            return bytes(body)


def content_type(scope):
    for name, value in scope["headers"]:
        if name == b"content-type":
            return value.split(b";", 1)[0].strip().lower()
    return b""


async def post_user(scope, receive, send, ident=None):
    """POST /users, or POST /minimal/users/{id} when ident is the routed id."""
    body = await read_body(scope, receive)
    if body is False:
        return  # nobody to answer
    if body is None:
        return await reply(send, 413, TOO_LARGE, extra=CLOSE)
    if content_type(scope) != JSON:
        return await reply(send, 415, UNSUPPORTED)
    user = bind_user(body)
    if user is None:
        return await reply(send, 400, BAD_REQUEST)
    record = {"name": user.name, "age": user.age, "adult": user.adult}
    if ident is not None:
        record = {"id": ident, **record}
    await reply(send, 200, dumps(record), JSON)


def route(path):
    """(allowed method, workload, id) for a known path, or None."""
    if path == "/":
        return "GET", "plaintext", None
    if path == "/json":
        return "GET", "json", None
    if path == "/users":
        return "POST", "post-json", None
    if path.startswith("/users/"):
        ident = parse_id(path[len("/users/"):])
        return None if ident is None else ("GET", "route", ident)
    if path.startswith("/minimal/users/"):
        ident = parse_id(path[len("/minimal/users/"):])
        return None if ident is None else ("POST", "minimal", ident)
    return None


async def app(scope, receive, send):
    """The ASGI 3 callable. A body the app does not read (404, 405, a GET with
    a body) is drained by uvicorn, so the connection stays in sync."""
    if scope["type"] != "http":
        return  # lifespan and websockets are off
    # raw_path: undecoded and without the query string, so /users/%34%32 is
    # not /users/42 (scope["path"] is percent-decoded).
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if raw else scope["path"]
    known = route(path)
    if known is None:
        return await reply(send, 404, NOT_FOUND)
    allow, workload, ident = known
    if scope["method"] != allow:
        return await reply(send, 405, NOT_ALLOWED, extra=((b"allow", allow.encode()),))
    if workload == "plaintext":
        await reply(send, 200, HELLO)
    elif workload == "json":
        await reply(send, 200, dumps({"message": "Hello, World!"}), JSON)
    elif workload == "route":
        await reply(send, 200, dumps({"id": ident}), JSON)
    else:  # post-json, minimal
        await post_user(scope, receive, send, ident)


def usage():
    print("usage: python3 server.py PORT", file=sys.stderr)
    sys.exit(2)


def main(argv):
    if len(argv) != 2:
        usage()
    if not (argv[1].isascii() and argv[1].isdigit() and 0 < int(argv[1]) < 65536):
        print(f"server.py: invalid port {argv[1]!r}", file=sys.stderr)
        usage()
    port = int(argv[1])

    try:
        import uvicorn
    except ImportError as e:
        print(f"server.py: {e}; install bench/http/uvicorn/requirements.txt", file=sys.stderr)
        return 1

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):
            # uvicorn's own shutdown polls every 0.1 s, waits for requests in
            # flight (a half-sent body for ever) and then raises the signal
            # again, which would end the process with 143, not 0. Like the Go
            # (Server.Close) and Rust (shutdown_background) servers, drop the
            # open connections instead: the kernel closes them as we exit.
            os._exit(0)

    # Bound here rather than by uvicorn, so a port in use is one plain line
    # and status 1. IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on
    # sockets whose proto says TCP, and accepted sockets inherit the
    # listener's (socket.socket's default proto is 0).
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(1024)
    except OSError as e:
        print(f"server.py: {e}", file=sys.stderr)
        return 1

    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        loop="asyncio",
        http="h11",
        ws="none",
        lifespan="off",
        workers=1,  # given, so WEB_CONCURRENCY is not read
        log_level="warning",
        access_log=False,
        proxy_headers=False,
        forwarded_allow_ips="127.0.0.1",  # given, so FORWARDED_ALLOW_IPS is not read
        backlog=1024,
    )
    server = Server(config)
    signal.signal(signal.SIGTERM, server.handle_exit)  # also before uvicorn installs its own
    signal.signal(signal.SIGINT, server.handle_exit)
    print(f"listening on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
