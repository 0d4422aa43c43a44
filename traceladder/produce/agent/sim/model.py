"""The built-in simulated model: an OpenAI-compatible /chat/completions endpoint in-process.

It is reached through the real `openai` client over an httpx2 transport (no port, no key), so the
agent loop, retries and span capture run exactly as against a real server. It recognises the case
by its instruction (unique in a valid suite) and replays the case's plan turn by turn.

A multi-turn case is recognised by its first user message and the turn by how many user
messages the request holds; each turn is answered by the golden path of that turn alone (in
`sim:faulty` too: its faults are single-turn), and its call ids name the turn
(`call_t{turn}_{step}_{index}`) so no id repeats across the conversation.

Model names: `sim:oracle` (golden path) and `sim:faulty` (one seeded, labelled fault per case),
optionally followed by `+quirk` flags reproducing real servers' deviations:
`args_object` (arguments as a JSON object, llama.cpp), `missing_ids`, `repeated_ids`,
`text_with_calls`, `finish_stop` (finish_reason "stop" while calls are present), `null_content`.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx2

from traceladder.produce.agent.sim.plans import Plan, PlannedCall, faulty_plan, oracle_plan
from traceladder.produce.agent.sim.sandbox import FailingOnce
from traceladder.suite.cases.model import Case
from traceladder.suite.domain.base import Domain, Sandbox

QUIRKS = frozenset(
    {"args_object", "missing_ids", "repeated_ids", "text_with_calls", "finish_stop", "null_content"}
)
SIM_HOST = "sim.traceladder.invalid"


@dataclass(frozen=True)
class SimSpec:
    mode: str  # oracle | faulty
    quirks: frozenset[str]

    @staticmethod
    def parse(model: str) -> SimSpec:
        """`sim:oracle+args_object` → SimSpec("oracle", {"args_object"}); ValueError otherwise."""
        if not model.startswith("sim:"):
            raise ValueError(f"{model!r} is not a simulated model")
        mode, *quirks = model[4:].split("+")
        if mode not in ("oracle", "faulty"):
            raise ValueError(f"unknown simulated model {model!r}; use sim:oracle or sim:faulty")
        unknown = set(quirks) - QUIRKS
        if unknown:
            raise ValueError(f"unknown quirk(s) {sorted(unknown)}; choose from {sorted(QUIRKS)}")
        return SimSpec(mode, frozenset(quirks))


def is_sim(model: str) -> bool:
    return model.startswith("sim:")


class SimModel:
    """Serves chat completions for the cases it was given. Thread-safe (no mutable state but a
    response counter)."""

    def __init__(
        self,
        spec: SimSpec,
        cases: Sequence[Case],
        domain: Domain,
        *,
        seed: int = 0,
        delay_s: float = 0.0,
    ) -> None:
        self.spec = spec
        self.delay_s = delay_s
        self.link = domain.chains.link
        self.endless_call = next(iter(domain.simulation.extra_reads.items()), (domain.tool_names[0], {}))
        self._plans: dict[str, Plan] = {}
        self._turn_plans: dict[str, list[Plan]] = {}  # a multi-turn case's: one per turn
        self._by_instruction: dict[str, Case] = {}
        for case in cases:
            if case.multi_turn:
                self._turn_plans[case.id] = [
                    oracle_plan(case.turn_case(i), domain) for i in range(len(case.turns))
                ]
                self._by_instruction[case.instruction] = case
                continue
            plan = oracle_plan(case, domain) if spec.mode == "oracle" else faulty_plan(case, domain, seed)
            self._plans[case.id] = plan
            self._by_instruction[case.instruction] = case
        self._ids = itertools.count(1)
        self.answer = domain.simulation.answer

    def label(self, case_id: str) -> dict[str, Any] | None:
        """The verdict a correct judge must give this case (faulty mode), else None."""
        plan = self._plans.get(case_id)
        return plan.label if plan else None

    def sandbox(self, case_id: str, inner: Sandbox) -> Sandbox:
        """The case's sandbox: as given, or failing the tools its plan makes time out."""
        plan = self._plans.get(case_id)
        return FailingOnce(inner, plan.failing_tools) if plan and plan.failing_tools else inner

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    # -- the endpoint ------------------------------------------------------------------------

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        if not request.url.path.endswith("/chat/completions"):
            return _error(404, f"no route {request.url.path}")
        try:
            body = json.loads(request.content)
        except ValueError:
            return _error(400, "request body is not JSON")
        status, payload, headers = self.respond(body)
        return httpx2.Response(status, json=payload, headers=headers)

    def respond(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(HTTP status, JSON body, headers) for one chat-completions request body."""
        if self.delay_s:
            time.sleep(self.delay_s)
        messages = body.get("messages", [])
        instruction = next((m.get("content") for m in messages if m.get("role") == "user"), None)
        case = self._by_instruction.get(instruction or "")
        if case is None:
            return 400, {"error": {"message": "the simulated model only knows suite cases"}}, {}
        if case.multi_turn:
            return self._respond_turn(body, case)
        plan = self._plans[case.id]
        if plan.http_error:
            return (
                plan.http_error,
                {"error": {"message": "simulated upstream failure"}},
                {"retry-after": "0"},
            )
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if plan.endless:  # the same harmless read forever
            calls: list[PlannedCall] | None = [PlannedCall(self.endless_call[0], dict(self.endless_call[1]))]
        else:
            calls = plan.turns[turn] if turn < len(plan.turns) else None
        final_text = plan.final_text
        if not calls and self.answer is not None:
            final_text = self.answer(_results(messages), plan.answer_fault) or final_text
        message = self._message(calls, final_text, _latest_link(messages, self.link), turn)
        return 200, self._payload(body, messages, message, calls), {}

    def _respond_turn(self, body: dict[str, Any], case: Case) -> tuple[int, dict[str, Any], dict[str, str]]:
        """A request of a multi-turn case: the turn is the number of user messages so far, the
        step within it the assistant messages after the last of them."""
        messages = body.get("messages", [])
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        plans = self._turn_plans[case.id]
        turn = len(users) - 1
        if turn >= len(plans):
            return 400, {"error": {"message": f"case {case.id} has {len(plans)} turns, not {turn + 1}"}}, {}
        plan = plans[turn]
        step = sum(1 for m in messages[users[-1] :] if m.get("role") == "assistant")
        calls = plan.turns[step] if step < len(plan.turns) else None
        final_text = plan.final_text
        if not calls and self.answer is not None:
            final_text = self.answer(_results(messages), plan.answer_fault) or final_text
        message = self._message(calls, final_text, _latest_link(messages, self.link), step, f"t{turn}_")
        return 200, self._payload(body, messages, message, calls), {}

    def _payload(
        self,
        body: dict[str, Any],
        messages: list[dict[str, Any]],
        message: dict[str, Any],
        calls: list[PlannedCall] | None,
    ) -> dict[str, Any]:
        finish = "tool_calls" if calls else "stop"
        if calls and "finish_stop" in self.spec.quirks:
            finish = "stop"
        usage_in = sum(len(str(m.get("content") or "")) for m in messages) // 4 + 50
        usage_out = len(json.dumps(message, ensure_ascii=False)) // 4
        payload = {
            "id": f"chatcmpl-sim-{next(self._ids)}",
            "object": "chat.completion",
            "created": 1_780_000_000,
            "model": body.get("model", "sim"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": usage_in,
                "completion_tokens": usage_out,
                "total_tokens": usage_in + usage_out,
            },
        }
        return payload

    def _message(
        self,
        calls: list[PlannedCall] | None,
        final_text: str,
        action_id: str | None,
        turn: int,
        id_prefix: str = "",
    ) -> dict[str, Any]:
        quirks = self.spec.quirks
        if not calls:
            content = None if "null_content" in quirks else final_text
            return {"role": "assistant", "content": content}
        tool_calls = []
        for index, call in enumerate(calls):
            arguments: Any
            if call.raw is not None:
                arguments = call.raw
            else:
                args = dict(call.arguments or {})
                if call.chain_action and action_id:
                    args[self.link] = action_id
                arguments = args if "args_object" in quirks else json.dumps(args, ensure_ascii=False)
            entry: dict[str, Any] = {
                "type": "function",
                "function": {"name": call.tool, "arguments": arguments},
            }
            if "missing_ids" not in quirks:
                entry["id"] = "call_0" if "repeated_ids" in quirks else f"call_{id_prefix}{turn}_{index}"
            tool_calls.append(entry)
        content = "我先查一下。" if "text_with_calls" in quirks else None
        return {"role": "assistant", "content": content, "tool_calls": tool_calls}


def _tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every tool result of the conversation so far that is a JSON object, in order."""
    found = []
    for message in messages:
        if message.get("role") != "tool":
            continue
        try:
            content = json.loads(message.get("content") or "")
        except ValueError:
            continue
        if isinstance(content, dict):
            found.append(content)
    return found


def _latest_link(messages: list[dict[str, Any]], link: str) -> str | None:
    """The chain link (e.g. action_id) the latest tool result returned, if any."""
    return next(
        (str(r[link]) for r in reversed(_tool_results(messages)) if isinstance(r.get(link), str)), None
    )


def _results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The successful tool results of the conversation so far, parsed, in order."""
    return [r for r in _tool_results(messages) if "error" not in r]


def _error(status: int, message: str) -> httpx2.Response:
    return httpx2.Response(status, json={"error": {"message": message}})
