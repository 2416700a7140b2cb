#!/usr/bin/env python3
"""cell-http-python: a hello-world HTTP/1.1 server on the standard library.

Usage: python3 server.py PORT

GET / answers 200 with "Content-Type: text/plain" and body "hello, world\\n";
any other path is 404, any other method on / is 405. Binds 127.0.0.1 only,
keeps connections alive (HTTP/1.1), sets TCP_NODELAY on every accepted socket,
logs nothing per request and exits 0 on SIGTERM. Reads no environment.
"""

import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HELLO = b"hello, world\n"
NOT_FOUND = b"not found\n"
NOT_ALLOWED = b"method not allowed\n"


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

    def _path(self):
        return urlsplit(self.path).path or "/"

    def _reply(self, status, body, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
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

    def do_GET(self):
        if "Content-Length" in self.headers or "Transfer-Encoding" in self.headers:
            self._discard_body()
        if self._path() != "/":
            self._reply(404, NOT_FOUND)
        else:
            self._reply(200, HELLO)

    def _not_get(self):
        self._discard_body()
        if self._path() != "/":
            self._reply(404, NOT_FOUND)
        else:
            self._reply(405, NOT_ALLOWED, [("Allow", "GET")])

    do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_get


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
