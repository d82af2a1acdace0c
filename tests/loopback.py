"""A loopback HTTP server for tests that talk to a fake exporter or Prometheus API."""

from __future__ import annotations

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
