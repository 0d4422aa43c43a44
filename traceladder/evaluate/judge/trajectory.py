"""What the judge sees of a trace, in one canonical form that is also the cache key.

A trajectory is the customer's instruction, every tool call (name, arguments, whether it
succeeded, the result) in order, and the final answer. Nothing that differs between two runs of
the same conversation is in it — no trace, span or call ids, no timestamps — so re-running a suite
whose agent behaves the same costs no judge calls. A result longer than `MAX_RESULT_CHARS` is cut
(and says so): the judge's bill must not be hostage to one huge tool response.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, NamedTuple

MAX_RESULT_CHARS = 4000


class TrajectoryCall(NamedTuple):
    tool: str
    arguments_raw: str | None
    ok: bool
    result_raw: str | None


def _value(raw: str | None, limit: int | None = None) -> Any:
    """Parsed JSON when the text is JSON (so key order and spacing do not matter), else the text."""
    if raw is None:
        return None
    if limit is not None and len(raw) > limit:
        return raw[:limit] + f" …[cut: {len(raw) - limit} more characters]"
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def trajectory(
    instruction: str | None, calls: Sequence[TrajectoryCall], final_answer: str | None
) -> dict[str, Any]:
    return {
        "instruction": instruction,
        "calls": [
            {
                "tool": c.tool,
                "arguments": _value(c.arguments_raw),
                "ok": c.ok,
                "result": _value(c.result_raw, MAX_RESULT_CHARS),
            }  # fmt: skip
            for c in calls
        ],
        "final_answer": final_answer,
    }


def canonical_text(t: dict[str, Any]) -> str:
    return json.dumps(t, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def trajectory_hash(t: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_text(t).encode("utf-8")).hexdigest()
