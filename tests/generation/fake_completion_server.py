"""An OpenAI-compatible ``/v1/completions`` server on loopback whose answers are a function of
(prompt, seed, choice index), for testing the client's protocol: what it sends, the order and
sharing of queries, concurrency, retries and the refusals. Real vLLM is tested in
``test_vllm_server.py``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeServer:
    """What the server saw and how it misbehaves (set the attributes before requests)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.fail_first = 0  # answer this many requests with 503 first
        self.drop_choice = False  # return n - 1 choices
        self.ignore_seed = False  # answers differ between identical requests
        self.delay = 0.0
        self.models: set[str] | None = None  # the names it serves (None: any)
        self.lock = threading.Lock()
        self.url = ""
        self._calls = 0

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self._calls += 1
            call = self._calls
            if self.fail_first >= call:
                return 503, {"error": {"message": "busy", "type": "server_error"}}
            self.requests.append(body)
        if self.models is not None and body["model"] not in self.models:
            message = f"The model `{body['model']}` does not exist."  # vLLM's words
            return 404, {"error": {"message": message, "type": "NotFoundError", "code": 404}}
        n = int(body.get("n", 1))
        salt = call if self.ignore_seed else 0
        seed = body.get("seed")
        texts = [  # choice j of a request seeded s draws with seed s + j, as vLLM does
            f" {body['prompt']}|seed={None if seed is None else seed + index}|{body['max_tokens']}|{salt}"
            for index in range(n - 1 if self.drop_choice else n)
        ]
        choices = [
            {"index": index, "text": text, "finish_reason": "length", "logprobs": None}
            for index, text in reversed(list(enumerate(texts)))  # any order: sorted by index
        ]
        return 200, {
            "id": "cmpl-1",
            "object": "text_completion",
            "created": 0,
            "model": body["model"],
            "choices": choices,
            "usage": {"prompt_tokens": 1, "completion_tokens": n, "total_tokens": n + 1},
        }


@contextmanager
def fake_server() -> Iterator[FakeServer]:
    """A :class:`FakeServer` listening on a free loopback port (``.url`` is its API root)."""
    state = FakeServer()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name): /v1/models
            names = sorted(state.models or ())
            self.send_json(200, {"object": "list", "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in names
            ]})  # fmt: skip

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.in_flight += 1
                state.most_in_flight = max(state.most_in_flight, state.in_flight)
            time.sleep(state.delay)
            status, payload = state.answer(body)
            with state.lock:
                state.in_flight -= 1
            self.send_json(status, payload)

        def send_json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
