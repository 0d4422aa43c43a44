"""A scripted OpenAI-compatible judge on 127.0.0.1 for rung-5 tests (stdlib only).

It records every request it gets (the trajectory the judge was shown) and answers by `mode`:

* `pass` — every criterion asked passes;
* `garbage` — prose, never JSON (an unparsable judge);
* `garbage_once` — prose for the first request about a trajectory, a valid pass after;
* `html` — an HTML page with status 200;
* `plain` — refuses `response_format` and `seed` with a 400 naming the field (as some servers do),
  then answers like `pass`;
* `unauthorized` — 401 to every request, `/models` included (a key the server refuses);
* `labels` / `flip` / `flip_every_other` — the labels of the meta-evaluation item whose
  trajectory it was shown (`labels` maps canonical trajectory text → labels): as labelled, always
  the opposite, or the opposite on every second request about the same item.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPPOSITE = {"pass": "fail", "fail": "pass"}


class JudgeServer:
    def __init__(self, mode: str = "pass", labels: dict[str, dict[str, str]] | None = None) -> None:
        self.mode, self.labels = mode, labels or {}
        self.trajectories: list[dict[str, Any]] = []  # one per request, refused ones included
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []  # every request's, GET /models included
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                with server.lock:
                    server.authorizations.append(self.headers.get("Authorization"))
                status = 401 if server.mode == "unauthorized" else 200
                self._send(status, json.dumps({"object": "list", "data": []}).encode(), "application/json")

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                with server.lock:
                    server.authorizations.append(self.headers.get("Authorization"))
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, payload, content_type = server.answer(body)
                self._send(status, payload, content_type)

            def _send(self, status: int, payload: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, body: dict[str, Any]) -> tuple[int, bytes, str]:
        system = next(m["content"] for m in body["messages"] if m["role"] == "system")
        text = next(m["content"] for m in body["messages"] if m["role"] == "user")
        asked = re.findall(r'^- "([^"]+)":', system, re.MULTILINE)
        with self.lock:
            self.requests.append(body)
            self.trajectories.append(json.loads(text))
            self.seen[text] += 1
            nth = self.seen[text]
        if self.mode == "unauthorized":
            message = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
            return 401, json.dumps(message).encode(), "application/json"
        for field in ("response_format", "seed") if self.mode == "plain" else ():
            if field in body:
                message = {"error": {"message": f"Unrecognized request argument supplied: {field}"}}
                return 400, json.dumps(message).encode(), "application/json"
        if self.mode == "html":
            return 200, b"<html><body>502 Bad Gateway</body></html>", "text/html"
        if self.mode == "garbage" or (self.mode == "garbage_once" and nth == 1):
            return self._completion("I think this agent did a pretty good job overall!")
        verdicts = dict.fromkeys(asked, "pass")
        if self.mode in ("labels", "flip", "flip_every_other"):
            labels = self.labels[text]
            flip = self.mode == "flip" or (self.mode == "flip_every_other" and nth % 2 == 0)
            verdicts = {c: OPPOSITE[labels[c]] if flip else labels[c] for c in asked}
        reply = {"criteria": {c: {"verdict": v, "reason": f"scripted: {v}"} for c, v in verdicts.items()}}
        return self._completion(json.dumps(reply))

    def _completion(self, content: str) -> tuple[int, bytes, str]:
        body = {
            "id": "chatcmpl-judge", "object": "chat.completion", "created": 1_780_000_000, "model": "judge-1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }  # fmt: skip
        return 200, json.dumps(body).encode(), "application/json"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> JudgeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
