"""A plain http.server on 127.0.0.1 in a thread, with scripted faults.

Routes are matched by the handler subclass; `faults` maps a route key (e.g.
`GetDataset alice/penguins`) to a list of faults served in order, one per
request, before the route behaves normally again: `429`, `500`, `timeout`
(sleep past the client's timeout, then hang up), `slow` (sleep, then answer),
`truncate` (declare the full length, send half). The request log keeps method, path and whether credentials were sent,
never the credentials themselves.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    server: LoopbackServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # keep pytest output clean
        pass


    def fault(self, key: str) -> str | None:
        """Serve the next scripted fault for `key`: "handled" when answered, "truncate" for the route to do."""
        with self.server.lock:
            self.server.log.append((self.command, self.path, key, "Authorization" in self.headers))
            plan = self.server.faults.get(key)
            fault = plan.pop(0) if plan else None
        if fault is None or fault == "truncate":
            return fault
        if fault == "slow":  # answer normally, but late
            # Calls in flight are counted over the stall, and released before the answer is
            # written: a client that got its answer (and let the next call go) is never still
            # counted, and an idle keep-alive connection never is. The concurrency test uses it.
            with self.server.lock:
                self.server.inflight += 1
                self.server.max_inflight = max(self.server.max_inflight, self.server.inflight)
            time.sleep(self.server.stall_s)
            with self.server.lock:
                self.server.inflight -= 1
            return None
        if fault == "timeout":
            time.sleep(self.server.stall_s)
            self.close_connection = True  # the client has given up by now; nothing to answer
            return "handled"
        status = int(fault)
        body = json.dumps({"code": status, "message": f"injected {status}"}).encode()
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Type", "text/plain")  # a proxy's error page, not the API's JSON
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return "handled"

    def send_bytes(self, body: bytes, content_type: str, status: int = 200, truncate: bool = False,
                   extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if truncate:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if truncate else body)
        if truncate:
            self.wfile.flush()
            self.close_connection = True

    def read_json(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, handler: type[Handler], port: int = 0):
        super().__init__(("127.0.0.1", port), handler)
        self.lock = threading.Lock()
        self.log: list[tuple[str, str, str, bool]] = []
        self.faults: dict[str, list[str]] = defaultdict(list)
        self.stall_s = 3.0
        self.inflight = 0
        self.max_inflight = 0
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def inject(self, key: str, *faults: str) -> None:
        with self.lock:
            for fault in faults:
                self.faults[key].append(fault)

    def hits(self, key: str) -> int:
        with self.lock:
            return sum(1 for entry in self.log if entry[2] == key)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=10)
