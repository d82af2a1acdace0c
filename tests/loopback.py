"""A loopback HTTP server for tests that talk to a fake exporter or Prometheus API."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(body_of: Callable[[str], tuple[bytes, str]]) -> tuple[ThreadingHTTPServer, str]:
    """Start a server on 127.0.0.1 (a free port) answering every GET with ``body_of(path)`` =
    ``(body, content type)``; returns the server (``shutdown()`` it) and its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            body, content_type = body_of(self.path)
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class RawServer:
    """A loopback TCP server (127.0.0.1, a free port) for servers that break HTTP: each connection's
    request head is read, then ``respond(path, count, connection)`` writes whatever bytes it likes
    (``count``: requests of that path so far, from 1) and the connection is closed. ``paths`` lists
    the requested paths (without the query) in order."""

    def __init__(self, respond: Callable[[str, int, socket.socket], None]) -> None:
        self.respond = respond
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self._stop = threading.Event()
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(10)
            head = b""
            try:
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    chunk = connection.recv(4096)
                    if not chunk:
                        return
                    head += chunk
                target = head.split(b" ", 2)[1].decode("latin-1")
                path = target.split("?", 1)[0]
                with self._lock:
                    self.paths.append(path)
                    count = self.paths.count(path)
                self.respond(path, count, connection)
            except OSError:  # the client gave up (a deadline): nothing more to send
                pass

    def close(self) -> None:
        self._stop.set()
        self._listener.close()


def http_answer(body: bytes, status: str = "200 OK", content_type: str = "application/json",
                headers: str = "") -> bytes:
    """One whole HTTP/1.1 answer with a Content-Length and ``Connection: close``."""
    return (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n{headers}\r\n").encode("latin-1") + body
