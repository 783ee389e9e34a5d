"""A local OpenAI-compatible chat endpoint for judge tests: answers come from a Python function.

``responder(body)`` returns the reply text, or ``(text, top_logprobs)`` with the alternatives of
the first token as ``[(token, logprob), ...]``, or an int HTTP status to fail with. Every request
body is kept in ``requests`` so tests can read exactly what the judge was shown.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], Any]


class FakeJudge:
    def __init__(self) -> None:
        self.responder: Responder = lambda body: "True"
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with judge._lock:
                    judge.requests.append(body)
                reply = judge.responder(body)
                if isinstance(reply, int):
                    self._send(reply, {"error": {"message": "fake failure"}})
                    return
                text, top = reply if isinstance(reply, tuple) else (reply, None)
                choice: dict[str, Any] = {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
                if top is not None:
                    alternatives = [{"token": t, "logprob": lp} for t, lp in top]
                    choice["logprobs"] = {"content": [{**alternatives[0], "top_logprobs": alternatives}]}
                self._send(200, {"id": "x", "object": "chat.completion", "choices": [choice]})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def prompts(self) -> list[str]:
        """The user message of every request so far."""
        return [m["content"] for body in self.requests for m in body["messages"] if m["role"] == "user"]

    def reset(self, responder: Responder) -> None:
        self.responder = responder
        self.requests.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
