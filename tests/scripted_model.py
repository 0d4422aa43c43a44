"""A scripted OpenAI-compatible model on 127.0.0.1 for a declarative domain's suite.

It answers as `sim:oracle` for the suite it was given (the golden calls), unless the system prompt
holds a marker — so a test changes the model's behaviour the way a pull request would, with
`traceladder run --system-prompt FILE`:

* `[[change-argument TOOL KEY VALUE]]`: every TOOL call sends KEY=VALUE (JSON) instead;
* `[[extra-call TOOL ARGS]]`: after the golden calls, one more call TOOL with ARGS (JSON);
* `[[worked-trace]]`: seed 2's worked flight trace for every case that searches and books — two
  searches with the date one day off (one per turn), then the booking with an extra `seat`.

Use as a context manager: `with ScriptedModel(domain_dir) as url: … --base-url url`.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from traceladder.agent.sim import SimModel, SimSpec
from traceladder.cases import load_cases
from traceladder.domain.declarative import load_directory

_MARKER = re.compile(r"\[\[(change-argument|extra-call|worked-trace)\s*([^\]]*)\]\]")


class ScriptedModel:
    def __init__(self, domain_dir: Path, cases: Path | None = None) -> None:
        domain = load_directory(domain_dir)
        self.sim = SimModel(SimSpec("oracle", frozenset()), load_cases(domain, cases), domain)
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(404, {"error": {"message": "no route"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                status, payload, _ = outer.sim.respond(body)
                if status == 200:
                    payload = outer.script(body, payload)
                self._send(status, payload)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def script(self, body: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        system = next((m.get("content") or "" for m in body["messages"] if m["role"] == "system"), "")
        found = _MARKER.search(system)
        if not found:
            return payload
        mode, arg = found.group(1), found.group(2).strip()
        payload = copy.deepcopy(payload)
        message = payload["choices"][0]["message"]
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if mode == "change-argument":
            tool, key, value = arg.split(" ", 2)
            for call in message.get("tool_calls") or []:
                if call["function"]["name"] == tool:
                    args = json.loads(call["function"]["arguments"])
                    args[key] = json.loads(value)
                    call["function"]["arguments"] = json.dumps(args)
        elif mode == "extra-call" and not message.get("tool_calls"):
            tool, args = arg.split(" ", 1)
            if not any(
                m["role"] == "tool" and m.get("tool_call_id") == "call_extra" for m in body["messages"]
            ):
                message["tool_calls"] = [{"id": "call_extra", "type": "function",
                                          "function": {"name": tool, "arguments": args}}]  # fmt: skip
                message["content"] = None
                payload["choices"][0]["finish_reason"] = "tool_calls"
        elif mode == "worked-trace":
            return self._worked_trace(body, payload, turn)
        return payload

    def _worked_trace(self, body: dict[str, Any], payload: dict[str, Any], turn: int) -> dict[str, Any]:
        instruction = next(m["content"] for m in body["messages"] if m["role"] == "user")
        case = self.sim._by_instruction[instruction]
        tools = [c.tool for c in case.calls]
        if tools != ["search_flights", "book_flight"]:
            return payload
        search, book = case.calls
        wrong = dict(search.params, date=str(date.fromisoformat(search.params["date"]) + timedelta(days=1)))
        script = [
            ("search_flights", wrong),
            ("search_flights", wrong),
            ("book_flight", dict(book.params, seat="12A")),
        ]
        message: dict[str, Any]
        if turn < len(script):
            tool, args = script[turn]
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{turn}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}]}  # fmt: skip
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": "Booked."}, "stop"
        payload["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
        return payload
