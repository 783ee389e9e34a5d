"""A local OpenAI-compatible endpoint for judge tests: answers come from a Python function.

``responder(body)`` returns the reply text, or ``(text, top_logprobs)`` with the alternatives of
the first token as ``[(token, logprob), ...]``, or an int HTTP status to fail with. Every request
body is kept in ``requests`` (and the path it was posted to in ``paths``) so tests can read
exactly what the judge was shown. ``/chat/completions`` answers in the chat shape,
``/completions`` (a plain prompt) in the legacy completion shape, as vLLM's server does.
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
        self.paths: list[str] = []
        self._lock = threading.Lock()
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with judge._lock:
                    judge.requests.append(body)
                    judge.paths.append(self.path)
                reply = judge.responder(body)
                if isinstance(reply, int):
                    self._send(reply, {"error": {"message": "fake failure"}})
                    return
                text, top = reply if isinstance(reply, tuple) else (reply, None)
                if not self.path.endswith("/chat/completions"):
                    self._send(200, {"id": "x", "object": "text_completion", "choices": [_completion(text, top)]})
                    return
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
        """The user message (or the plain prompt) of every request so far."""
        return [
            m["content"] if "messages" in body else body["prompt"]
            for body in self.requests
            for m in body.get("messages", [{"role": "user"}])
            if m["role"] == "user"
        ]

    def reset(self, responder: Responder) -> None:
        self.responder = responder
        self.requests.clear()
        self.paths.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _completion(text: str, top: list[tuple[str, float]] | None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}
    if top is not None:
        choice["logprobs"] = {"tokens": [top[0][0]], "token_logprobs": [top[0][1]], "top_logprobs": [dict(top)]}
    return choice
