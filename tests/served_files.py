# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real HTTP server on localhost serving files the test sets (and may change while
it runs): where a template names a URL (AWS::CloudFormation::Stack's TemplateURL)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class ServedFiles:
    """``files[name] = text`` is served at ``url + "/" + name`` (404 otherwise)."""

    def __init__(self, server: http.server.ThreadingHTTPServer, files: dict[str, str]) -> None:
        self.files = files
        self.url = f"http://127.0.0.1:{server.server_address[1]}"


@contextmanager
def served_files() -> Iterator[ServedFiles]:
    files: dict[str, str] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            text = files.get(self.path.lstrip("/"))
            body = (text if text is not None else "not found").encode()
            self.send_response(200 if text is not None else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
            """Quiet: the tests' output is theirs."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield ServedFiles(server, files)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
