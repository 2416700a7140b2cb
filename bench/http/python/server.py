#!/usr/bin/env python3
"""cell-http-python: an HTTP/1.1 server on the standard library.

Usage: python3 server.py PORT

Serves the five workloads of bench/http/README.md: GET / (plain text),
GET /json (a serialised message), GET /users/{id} (an unsigned 64-bit id
echoed), POST /users (a JSON body bound to a typed record and echoed) and
POST /minimal/users/{id} (both: the id merged into the bound record).
Unknown paths are 404, a wrong method on a known path is 405 with Allow.
Binds 127.0.0.1 only, keeps connections alive (HTTP/1.1), sets TCP_NODELAY on
every accepted socket, logs nothing per request and exits 0 on SIGTERM.
Reads no environment.
"""

import dataclasses
import json
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HELLO = b"hello, world\n"
NOT_FOUND = b"not found\n"
NOT_ALLOWED = b"method not allowed\n"
BAD_REQUEST = b"bad request\n"
TOO_LARGE = b"payload too large\n"
UNSUPPORTED = b"unsupported media type\n"
NOT_IMPLEMENTED = b"not implemented\n"

MAX_BODY = 64 * 1024  # a larger POST /users or /minimal/users/{id} body is refused with 413
U64 = 1 << 64


@dataclasses.dataclass
class User:
    """The post-json record."""

    name: str
    age: int  # unsigned 64-bit
    adult: bool


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")  # json.loads accepts NaN and Infinity


def parse_user(body):
    """Bind a POST /users body to a User, or return None if it does not fit."""
    try:
        obj = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    if not isinstance(obj, dict):
        return None
    name, age, adult = obj.get("name"), obj.get("age"), obj.get("adult")
    # type() rather than isinstance(): bool is a subclass of int.
    if type(name) is not str or type(age) is not int or type(adult) is not bool:
        return None
    if not 0 <= age < U64:
        return None
    try:
        name.encode("utf-8")  # a lone surrogate escape ("\ud800") is no text
    except UnicodeEncodeError:
        return None
    return User(name, age, adult)


def parse_id(digits):
    """The id of /users/{id} or /minimal/users/{id} (ASCII digits, fits u64), or None."""
    if not (0 < len(digits) <= 20 and digits.isascii() and digits.isdigit()):
        return None
    n = int(digits)
    return n if n < U64 else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def version_string(self):
        return "cell-http-python"

    def setup(self):
        # Without TCP_NODELAY, Nagle + delayed ACK caps throughput near 1.4k req/s.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()

    def log_message(self, format, *args):  # noqa: A002 - signature is inherited
        pass

    def _reply(self, status, body, extra=(), ctype="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        # parse_request() already decided from the request's Connection
        # header and version; say so, as the other servers do.
        if self.close_connection:
            self.send_header("Connection", "close")
        elif self.request_version == "HTTP/1.0":
            self.send_header("Connection", "keep-alive")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _reply_json(self, obj):
        # Serialised per request; compact separators as the other servers write.
        self._reply(200, json.dumps(obj, separators=(",", ":")).encode(), ctype="application/json")

    def _discard_body(self):
        # Keep the connection in sync if a client sent a body we ignore.
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
            self.close_connection = True
        while length > 0:
            chunk = self.rfile.read(min(length, 65536))
            if not chunk:
                break
            length -= len(chunk)

    def _post_user(self, ident=None):
        """POST /users, or POST /minimal/users/{id} when ident is the routed id."""
        if self.headers.get("Transfer-Encoding"):
            # http.server does not decode chunked bodies: answer and close.
            self.close_connection = True
            return self._reply(501, NOT_IMPLEMENTED)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            return self._reply(400, BAD_REQUEST)
        if length > MAX_BODY:
            self.close_connection = True  # the body stays unread
            return self._reply(413, TOO_LARGE)
        body = self.rfile.read(length)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return self._reply(415, UNSUPPORTED)
        user = parse_user(body)
        if user is None:
            return self._reply(400, BAD_REQUEST)
        record = dataclasses.asdict(user)
        if ident is not None:
            record = {"id": ident, **record}
        self._reply_json(record)

    def _dispatch(self):
        path = urlsplit(self.path).path or "/"
        if path == "/":
            allow, serve = "GET", lambda: self._reply(200, HELLO)
        elif path == "/json":
            allow, serve = "GET", lambda: self._reply_json({"message": "Hello, World!"})
        elif path == "/users":
            allow, serve = "POST", self._post_user
        elif path.startswith("/users/") and (ident := parse_id(path[len("/users/"):])) is not None:
            allow, serve = "GET", lambda: self._reply_json({"id": ident})
        elif path.startswith("/minimal/users/") and (
            (ident := parse_id(path[len("/minimal/users/"):])) is not None
        ):
            allow, serve = "POST", lambda: self._post_user(ident)
        else:
            self._discard_body()
            return self._reply(404, NOT_FOUND)
        if self.command != allow:
            self._discard_body()
            return self._reply(405, NOT_ALLOWED, [("Allow", allow)])
        if allow == "GET" and ("Content-Length" in self.headers or "Transfer-Encoding" in self.headers):
            self._discard_body()
        serve()

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _dispatch


class Server(ThreadingHTTPServer):
    allow_reuse_address = True  # SO_REUSEADDR on the listener
    daemon_threads = True  # idle keep-alive connections must not block exit
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        pass  # client resets etc.: no per-request output


def usage():
    print("usage: python3 server.py PORT", file=sys.stderr)
    sys.exit(2)


def main(argv):
    if len(argv) != 2:
        usage()
    try:
        port = int(argv[1])
    except ValueError:
        port = 0
    if not 0 < port < 65536 or not argv[1].isdigit():
        print(f"server.py: invalid port {argv[1]!r}", file=sys.stderr)
        usage()

    try:
        httpd = Server(("127.0.0.1", port), Handler)
    except OSError as e:
        print(f"server.py: {e}", file=sys.stderr)
        return 1

    def on_term(signum, frame):
        # shutdown() blocks until serve_forever returns, so call it from
        # another thread, never from the signal handler's own thread.
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    print(f"listening on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    with httpd:
        httpd.serve_forever(poll_interval=0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
