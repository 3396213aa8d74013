"""A local web server for a folder of built pages (the site's tests and ``book/pdf/build.py``).

Both load the pages in Chromium from ``http://127.0.0.1:<port>/``, where the browser behaves as
on the published site (``file://`` blocks scripts' requests and module loads). A module of its
own beside the Sphinx extension package (``book/ext`` is on both their paths), not inside it:
importing ``gatherbook_sphinx`` costs seconds (Sphinx), this costs nothing.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from pathlib import Path
from typing import Iterator


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files with the types a browser needs (scripts, fonts, SVG, notebooks), lets the
    browser cache them as a real web server would, and logs nothing."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".ipynb": "application/x-ipynb+json", ".svg": "image/svg+xml",
                      ".js": "text/javascript", ".woff": "font/woff", ".woff2": "font/woff2"}

    def end_headers(self):
        # the browser keeps the theme's scripts between pages, as with any real web server
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on a free port of 127.0.0.1; yields the base URL (ending in ``/``)."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
