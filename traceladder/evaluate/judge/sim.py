"""`sim:judge`: a deterministic simulated judge, served over an in-process transport to the real
`openai` client (the judge path runs exactly as against a server). It is a simulator — its
verdicts come from three fixed heuristics, not from understanding — and everything it writes says
so ("sim:judge" in every reason):

- grounded: every fact the final answer states — ids (letters then digits: W441, ACT-001), numbers,
  ISO dates, and lifecycle words (shipped, confirmed, …) — occurs in the instruction, the call
  arguments or the tool results; an answer that claims nothing is grounded unless the last call
  failed (then "done" claims an outcome that did not happen).
- tool_choice: no call repeats an earlier one with the same arguments.
- policy: no confirmation call unless the instruction asks to go ahead (a change confirmed that
  the customer never asked for) — in this simulator, "confirm" words in the instruction.

`selfcheck --judge` measures it against the labelled set like any other judge.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx2

SIM_JUDGE = "sim:judge"
SIM_JUDGE_HOST = "judge.sim.traceladder.invalid"
LIFECYCLE = (
    "pending",
    "processing",
    "shipped",
    "delivered",
    "cancelled",
    "returned",
    "refunded",
    "confirmed",
    "aborted",
    "requested",
)
# ASCII boundaries: in Chinese text every character is a word character to `\b`.
_ID = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{1,4}-?\d{2,}(?![A-Za-z0-9])")
_NUMBER = re.compile(r"(?<![A-Za-z0-9.\-])\d+(?:\.\d+)?(?![A-Za-z0-9\-])")
_FAILURE_WORDS = re.compile(r"失败|错误|未能|无法|抱歉|超时|error|fail|unable|sorry|timed out", re.IGNORECASE)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_WORD = re.compile(r"[a-z_]+")
_CONFIRM_ASKED = re.compile(r"确认|confirm|go ahead|proceed|直接|帮我办", re.IGNORECASE)


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (str(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [] if value is None else [str(value)]


def _numbers(texts: list[str]) -> set[float]:
    return {float(n) for t in texts for n in _NUMBER.findall(_DATE.sub(" ", t))}


def grounded(t: dict[str, Any]) -> tuple[str, str]:
    answer = t.get("final_answer") or ""
    calls = t.get("calls") or []
    evidence = [t.get("instruction") or ""] + [
        s for c in calls for s in _strings([c.get("arguments"), c.get("result")])
    ]
    text = "\n".join(evidence)
    for found in _ID.findall(answer):
        if found not in text:
            return "fail", f"sim:judge: the answer names {found}, which no tool result or argument contains"
    for date in _DATE.findall(answer):
        if date not in text:
            return "fail", f"sim:judge: the answer states the date {date}, found in no tool result"
    known = _numbers(evidence)
    for number in _NUMBER.findall(_DATE.sub(" ", _ID.sub(" ", answer))):
        if float(number) not in known:
            return "fail", f"sim:judge: the answer states {number}, which no tool result or argument contains"
    words = set(_WORD.findall(text.lower()))
    for word in _WORD.findall(answer.lower()):
        if word in LIFECYCLE and word not in words:
            return "fail", f"sim:judge: the answer says {word!r}, which no tool result says"
    if calls and calls[-1].get("ok") is False and not _FAILURE_WORDS.search(answer):
        return (
            "fail",
            f"sim:judge: the last call ({calls[-1].get('tool')}) failed, yet the answer reports no failure",
        )
    return "pass", "sim:judge: every id, number, date and status the answer states occurs in the evidence"


def tool_choice(t: dict[str, Any]) -> tuple[str, str]:
    seen = set()
    for call in t.get("calls") or []:
        key = json.dumps([call.get("tool"), call.get("arguments")], sort_keys=True, ensure_ascii=False)
        if key in seen:
            return "fail", f"sim:judge: {call.get('tool')} was called twice with the same arguments"
        seen.add(key)
    return "pass", "sim:judge: no call repeats an earlier one"


def policy(t: dict[str, Any]) -> tuple[str, str]:
    confirmed = [c for c in t.get("calls") or [] if c.get("tool") == "confirm_action"]
    if confirmed and not _CONFIRM_ASKED.search(t.get("instruction") or ""):
        return "fail", "sim:judge: a change was confirmed but the instruction never asks to go ahead"
    return "pass", "sim:judge: no confirmation the customer did not ask for"


CHECKS = {"grounded": grounded, "tool_choice": tool_choice, "policy": policy}
_CONFIRM_RULE = re.compile(r"confirm|确认", re.IGNORECASE)


def _policy_text(system: str) -> str:
    """The policy a judge prompt quotes (`evaluate.judge.rubric`'s template: after `Policy:`, before the
    reply instructions)."""
    _, _, rest = system.partition("\nPolicy:\n")
    return rest.partition("\n\nReply with one JSON object")[0]


def judge_reply(system: str, trajectory: dict[str, Any]) -> dict[str, Any]:
    """The reply to one judge request: the criteria the prompt asks (quoted as `- "id":` lines)."""
    asked = re.findall(r'^- "([^"]+)":', system, re.MULTILINE)
    criteria = {}
    for name in asked:
        check = CHECKS.get(name)
        if name == "policy" and not _CONFIRM_RULE.search(_policy_text(system)):
            # its one rule is about confirmations: a policy that states none cannot be broken by one
            criteria[name] = {
                "verdict": "pass",
                "reason": "sim:judge: the policy states no confirmation rule",
            }
            continue
        verdict, reason = (
            check(trajectory) if check else ("not_applicable", f"sim:judge has no check for {name}")
        )
        criteria[name] = {"verdict": verdict, "reason": reason}
    return {"criteria": criteria}


def handle(request: httpx2.Request) -> httpx2.Response:
    if not request.url.path.endswith("/chat/completions"):
        return httpx2.Response(404, json={"error": {"message": f"no route {request.url.path}"}})
    try:
        body = json.loads(request.content)
        messages = body["messages"]
        system = next(m["content"] for m in messages if m["role"] == "system")
        trajectory = json.loads(next(m["content"] for m in messages if m["role"] == "user"))
    except (ValueError, KeyError, StopIteration, TypeError):
        return httpx2.Response(
            400, json={"error": {"message": "sim:judge takes a judge prompt and a trajectory"}}
        )
    content = json.dumps(judge_reply(system, trajectory), ensure_ascii=False)
    usage_in = (len(system) + len(messages[-1]["content"])) // 4
    usage_out = len(content) // 4
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-simjudge",
            "object": "chat.completion",
            "created": 1_780_000_000,
            "model": SIM_JUDGE,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": usage_in,
                "completion_tokens": usage_out,
                "total_tokens": usage_in + usage_out,
            },
        },
    )


def transport() -> httpx2.MockTransport:
    return httpx2.MockTransport(handle)
