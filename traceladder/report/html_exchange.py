"""A trace's conversation in the HTML report, in the order it happened: the messages sent before the
model's first turn (the user's request), each model response with every call it made — the
arguments as the model sent them and the result returned to it — and the final answer.

The conversation is `exchange.ExchangeDetail` as a plain mapping (`dataclasses.asdict`);
nothing here reads spans. Every string in it is the model's, a tool's or a user's — untrusted —
and reaches the page through `esc` only. System prompts repeat across a suite's cases, so each
distinct one is printed once (`system_prompts`) and a conversation links to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from traceladder.report.html_text import clip, esc

MESSAGE_CHARS = 4000  # per message, argument text or result; the store keeps every character
_SYSTEM_ROLES = ("system", "developer")


def system_prompts(conversations: Iterable[Mapping[str, Any] | None]) -> dict[str, int]:
    """Each distinct system prompt of these conversations, numbered from 1 in first appearance."""
    found: dict[str, int] = {}
    for conversation in conversations:
        for message in (conversation or {}).get("opening") or ():
            if message.get("role") in _SYSTEM_ROLES and message.get("text") not in found:
                found[message["text"]] = len(found) + 1
    return found


def prompts_block(prompts: Mapping[str, int]) -> str:
    """The system prompts the conversations link to, each once (collapsed: they are long)."""
    if not prompts:
        return ""
    items = "".join(
        f'<li id="prompt-{n}"><b>System prompt {n}</b> ({len(text):,} characters)'
        f'<pre class="said">{esc(text)}</pre></li>'
        for text, n in prompts.items()
    )
    return (
        f'<details class="prompts" id="system-prompts"><summary>System prompts ({len(prompts)}): each '
        "is printed here once; the conversations below link to it</summary>"
        f'<ol class="prompts">{items}</ol></details>'
    )


def exchange(convo: Mapping[str, Any] | None, prompts: Mapping[str, int]) -> str:
    """The conversation as an ordered list, or a sentence saying the trace records none."""
    if not convo:
        return '<p class="muted">The trace records no message, call or answer.</p>'
    items = [_opening(m, prompts) for m in convo.get("opening") or ()]
    if not any(m.get("role") not in _SYSTEM_ROLES for m in convo.get("opening") or ()):
        items.append(
            '<li class="turn said-user"><div class="who">user</div>'
            '<p class="muted">The trace does not record the request.</p></li>'
        )
    responses: Sequence[Mapping[str, Any]] = convo.get("responses") or ()
    answer = convo.get("final_answer")
    last = responses[-1] if responses else None
    # The last response usually *is* the final answer: shown once, as the answer.
    answered_by_last = bool(answer and last and not last.get("calls") and last.get("text") == answer)
    for r in responses[:-1] if answered_by_last else responses:
        items.append(_response(r))
    if answer:
        step = f" · response {last['step']}" if answered_by_last and last and last.get("step") else ""
        items.append(
            f'<li class="turn said-answer"><div class="who">final answer{step}</div>'
            f'<blockquote class="answer">{_text(answer)}</blockquote></li>'
        )
    else:
        items.append(
            '<li class="turn said-answer"><div class="who">final answer</div>'
            '<p class="muted">No final answer is recorded.</p></li>'
        )
    return f'<ol class="conversation">{"".join(items)}</ol>'


def _text(value: str) -> str:
    return esc(clip(value, MESSAGE_CHARS))


def _opening(message: Mapping[str, Any], prompts: Mapping[str, int]) -> str:
    role, text = message.get("role"), str(message.get("text") or "")
    if role in _SYSTEM_ROLES and text in prompts:
        n = prompts[text]
        return (
            f'<li class="turn said-system"><div class="who">{esc(role)}</div>'
            f'<a href="#prompt-{n}">System prompt {n}</a> <span class="muted">({len(text):,} characters, '
            "printed once above the case table)</span></li>"
        )
    who = "user" if role in ("user", "human") else esc(role or "message")
    said = f'<div class="said">{_text(text)}</div>'
    return f'<li class="turn said-user"><div class="who">{who}</div>{said}</li>'


def _response(response: Mapping[str, Any]) -> str:
    step = response.get("step")
    who = f"model · response {esc(step)}" if step is not None else "calls no recorded response shows"
    text = response.get("text")
    out = [f'<li class="turn said-model"><div class="who">{who}</div>']
    if text:
        out.append(f'<div class="said">{_text(text)}</div>')
    calls = response.get("calls") or ()
    if calls:
        out.append(f'<ol class="conv-calls">{"".join(_call(c) for c in calls)}</ol>')
    elif not text:
        out.append('<p class="muted">No text and no call recorded for this response.</p>')
    return "".join(out) + "</li>"


def _arguments(raw: str | None) -> tuple[str, str]:
    """(text to show, a note): JSON objects indented for reading, anything else exactly as sent."""
    if raw is None:
        return "", "no argument text recorded"
    try:
        parsed = json.loads(raw)
    except ValueError:
        return raw, "not valid JSON: shown as sent"
    if not isinstance(parsed, dict):
        return raw, "not a JSON object: shown as sent"
    return json.dumps(parsed, ensure_ascii=False, indent=2), ""


def _call(call: Mapping[str, Any]) -> str:
    status = call.get("status")
    ok = status == "ok"
    state = "✓ ok" if ok else f"✗ {status}" + (f": {call['error_type']}" if call.get("error_type") else "")
    args, note = _arguments(call.get("arguments_raw"))
    result = call.get("result")
    result_html = (
        f'<pre class="conv-result">{_text(str(result))}</pre>'
        if result is not None
        else '<p class="muted">No result is recorded.</p>'
    )
    return (
        f'<li class="conv-call"><div class="who">→ call #{esc(call.get("ordinal"))} '
        f'<b class="conv-tool">{esc(call.get("tool"))}</b> '
        f'<span class="status {"s-good" if ok else "s-bad"}">{esc(state)}</span></div>'
        f'<div class="muted">arguments{" (" + esc(note) + ")" if note else ""}</div>'
        f'<pre class="conv-args">{_text(args)}</pre>'
        f'<div class="muted">← result returned to the model</div>{result_html}</li>'
    )
