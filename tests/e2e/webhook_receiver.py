"""A webhook receiver as its own process, for tests: `python webhook_receiver.py PORT DIR`.

Every POST is written to DIR (`NNN.body`: the raw body; `NNN.headers`: its headers as JSON). The answer depends on
the file DIR/mode: `ok` (the default) → 204, `fail` → 500, `redirect` → 302 to /elsewhere.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DIR = Path(sys.argv[2])


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        n = len(list(DIR.glob("*.body")))
        (DIR / f"{n:03d}.headers").write_text(json.dumps(dict(self.headers.items())))
        (DIR / f"{n:03d}.body").write_bytes(raw)
        mode = (DIR / "mode").read_text().strip() if (DIR / "mode").exists() else "ok"
        if mode == "fail":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"receiver down for maintenance")
        elif mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.end_headers()
        else:
            self.send_response(204)
            self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
