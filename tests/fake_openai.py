"""A loopback OpenAI-compatible chat server for testing the real litellm client.

`FakeOpenAI(script)` serves POST /v1/chat/completions (and /chat/completions) on
127.0.0.1 with an OS-chosen port, in a daemon thread. Each request takes the next
reply from `script` (the last one repeats); a reply is one of

- `Reply.answer(obj)`: a 200 chat completion whose message content is json.dumps(obj);
- `Reply.text(s)`: a 200 chat completion with raw content `s` (e.g. malformed JSON);
- `Reply.status(code)`: an OpenAI-style error body with that HTTP status;
- `Reply.sleep(seconds)`: answer nothing for that long, then drop the connection (a timeout).

A callable script entry gets the parsed request body and returns a Reply, so a
test can answer from the prompt. Every request body is kept in `requests`,
its Authorization header in `authorizations`.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from collections.abc import Callable


@dataclass(frozen=True)
class Reply:
    kind: str
    payload: Any = None

    @staticmethod
    def answer(obj: Any) -> Reply:
        return Reply("content", json.dumps(obj))

    @staticmethod
    def text(content: str) -> Reply:
        return Reply("content", content)

    @staticmethod
    def status(code: int) -> Reply:
        return Reply("status", code)

    @staticmethod
    def sleep(seconds: float) -> Reply:
        return Reply("sleep", seconds)


class FakeOpenAI:
    def __init__(self, script: list[Reply | Callable[[dict], Reply]]):
        if not script:
            raise ValueError("script must hold at least one reply")
        self.script = list(script)
        self.requests: list[dict] = []
        self.authorizations: list[str] = []  # the Authorization header of each request
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def n_requests(self) -> int:
        with self._lock:
            return len(self.requests)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict) -> Reply:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            entry = self.script[min(index, len(self.script) - 1)]
        return entry(body) if callable(entry) else entry

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "bad json", "type": "invalid_request_error"}})
                    return
                with fake._lock:
                    fake.authorizations.append(self.headers.get("Authorization", ""))
                reply = fake._next(body)
                if reply.kind == "sleep":
                    time.sleep(reply.payload)
                    self.close_connection = True
                    return
                if reply.kind == "status":
                    code = int(reply.payload)
                    self._send(code, {"error": {"message": f"scripted HTTP {code}", "type": "server_error",
                                                "code": str(code)}}, retry_after=code == 429)
                    return
                self._send(200, _completion(body, reply.payload))

            def _send(self, code: int, obj: dict, retry_after: bool = False) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if retry_after:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _completion(body: dict, content: str) -> dict:
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content) // 4,
                  "total_tokens": prompt_chars // 4 + len(content) // 4},
    }
