"""The customer's instruction and the agent's final answer, read from a trace's LLM spans — what
the judge needs besides the calls, for traces that carry no case.

By convention: OTel GenAI `gen_ai.input.messages` / `gen_ai.output.messages` (text parts);
OpenInference `llm.input_messages.{i}.message.*` / `llm.output_messages.{i}.message.*`; OpenLLMetry
`gen_ai.prompt.{i}.*` / `gen_ai.completion.{i}.*`. The instruction is the first user message of
the earliest request that shows one; the final answer is the text of the latest response that has
text. Total: a producer that records no content gives None, never an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from traceladder.conventions.values import as_list, indexed_fields, loads, text

_OI_IN, _OI_OUT = "llm.input_messages.", "llm.output_messages."
_LL_IN, _LL_OUT = "gen_ai.prompt.", "gen_ai.completion."


def _parts_text(message: dict[str, Any]) -> str | None:
    """A GenAI message's text: its text parts joined (or a plain `content` string)."""
    parts = as_list(message.get("parts"))
    if parts is None:
        return text(message.get("content"))
    texts = [text(p.get("content")) for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    joined = "".join(t for t in texts if t)
    return joined or None


def _indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened `prefix{i}.field` attributes → messages in index order (OpenInference's
    `message.` level dropped, so both conventions read `role` and `content`)."""
    found = indexed_fields(attrs, prefix)
    return [{k.removeprefix("message."): v for k, v in found[i].items()} for i in sorted(found)]


def _messages(attrs: dict[str, Any], side: str) -> list[tuple[str | None, str | None]]:
    """(role, text) of one side ("in" | "out") of a request, in the first convention present."""
    genai = loads(attrs.get("gen_ai.input.messages" if side == "in" else "gen_ai.output.messages"))
    if isinstance(genai, list):
        return [(text(m.get("role")), _parts_text(m)) for m in genai if isinstance(m, dict)]
    for prefix in (_OI_IN, _LL_IN) if side == "in" else (_OI_OUT, _LL_OUT):
        flat = _indexed(attrs, prefix)
        if flat:
            return [(text(m.get("role")) or ("assistant" if side == "out" else None), text(m.get("content")))
                    for m in flat]  # fmt: skip
    return []


def exchange(llm_span_attributes: Sequence[dict[str, Any]]) -> tuple[str | None, str | None]:
    """(instruction, final answer) from the attributes of a trace's LLM spans in start order."""
    instruction = None
    for attrs in llm_span_attributes:
        instruction = next((t for role, t in _messages(attrs, "in") if role == "user" and t), None)
        if instruction:
            break
    answer = None
    for attrs in reversed(llm_span_attributes):
        answer = next(
            (t for role, t in reversed(_messages(attrs, "out")) if role in (None, "assistant") and t), None
        )
        if answer:
            break
    return instruction, answer
