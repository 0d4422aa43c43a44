"""The reading pass reads each chat history once (`extract.reading._Texts`), and that changes nothing.

A chat span's history repeats the previous span's history and adds the new turn. The reading pass
reads a history that extends the one before it under the same key as the earlier one's call items
plus the new messages' items, and answers a text it has seen from memory. The oracle here is the
reading of each span *alone* (a trace of one span: nothing to reuse), merged: the same unread
shapes, counts and example ids must come out of the whole trace. Histories are built to hit every
way the reuse could go wrong: a tail that is not valid JSON or only valid as a Python literal, an
empty or trailing-comma tail, whitespace around the comma, a prefix that names a call only under a
key the mention check does not see, a shorter or unrelated text in between, and numbers orjson
refuses.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from traceladder.extract.conventions import registry
from traceladder.extract.conventions.views import ExtractedCall, SpanView
from traceladder.extract.reading import Unread, read_trace


def _span(i: int, attributes: dict[str, Any]) -> SpanView:
    return SpanView(
        span_id=f"s{i:04d}",
        parent_span_id=None,
        name="acme.llm",
        kind="CLIENT",
        start_ns=1000 + i,
        end_ns=2000 + i,
        status_code="UNSET",
        status_message=None,
        attributes=attributes,
        events=[],
        scope_name="acme",
    )


def _call(call_id: str, name: str = "get_weather") -> ExtractedCall:
    return ExtractedCall(1, name, call_id, "{}", None, "ok", None, "otel_genai", "tool_span",
                         None, None, None, None, None, None, None)  # fmt: skip


def _unread(spans: list[SpanView], calls: list[ExtractedCall]) -> list[Unread]:
    return read_trace(spans, [], calls, registry.hooks()).unread


def _alone(spans: list[SpanView], calls: list[ExtractedCall]) -> list[Unread]:
    """The unread rows of the trace, from each span read in a trace of its own, merged."""
    merged: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for span in spans:
        for u in _unread([span], calls):
            items, ids = merged.get((u.shape, u.source), (0, []))
            merged[(u.shape, u.source)] = (items + u.items, [*ids, *u.ids])
    rows = [Unread(shape, source, items, tuple(dict.fromkeys(ids))[:5])
            for (shape, source), (items, ids) in merged.items()]  # fmt: skip
    return sorted(rows, key=lambda u: (u.source != "span", u.shape, u.source))


def _ordered(rows: list[Unread]) -> list[Unread]:
    return sorted(rows, key=lambda u: (u.source != "span", u.shape, u.source))


def _message(rng: random.Random, turn: int) -> dict[str, Any]:
    kind = rng.randrange(6)
    if kind == 0:
        return {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": f"c{turn}", "name": "get_weather"}],
            "finish": None,
            "done": True,
        }  # JSON's null and true: no Python literal holds them
    if kind == 1:
        return {"role": "assistant", "tool_calls": [{"id": f"c{turn}", "function": {"name": "book"}}]}
    if kind == 2:  # says tool only under a key the mention check does not see ("Tool Call")
        return {"role": "assistant", "Tool Call": {"id": f"k{turn}", "name": "lookup"}}
    if kind == 3:  # a tool call only inside nested JSON text
        return {"role": "tool", "content": json.dumps({"toolUse": {"toolUseId": f"n{turn}", "name": "x"}})}
    return {"role": rng.choice(["user", "assistant"]), "content": "word " * rng.randrange(1, 60)}


_SEPARATORS = [(", ", ": "), (",", ":"), (" ,\n ", " : ")]


def _text(messages: list[dict[str, Any]], separators: tuple[str, str]) -> str:
    return json.dumps(messages, separators=separators)


def _histories(rng: random.Random, turns: int) -> list[str]:
    """One conversation's histories, turn by turn, with the odd broken or unrelated text between."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You help. " * 30}]
    separators = rng.choice(_SEPARATORS)
    out = []
    for turn in range(turns):
        messages.append(_message(rng, turn))
        good = _text(messages, separators)
        twist = rng.randrange(14)
        if twist == 0:  # the new turn is not JSON (a truncated export)
            out.append(good[:-1] + ', {"role": "assistant", "tool_calls": [{"id": "t1"')
        elif twist == 1:  # a trailing comma: not JSON, a Python literal
            out.append(good[:-1] + ",]")
        elif twist == 2:  # garbage after the list
            out.append(good + " trailing")
        elif twist == 3:  # a number orjson refuses in the new turn
            out.append(good[:-1] + ', {"tool_calls": [{"id": "big", "n": 1' + "0" * 30 + "}]}]")
        elif twist == 4:  # something shorter and unrelated
            out.append('[{"tool_calls": [{"id": "short"}]}]' + " " * 300)
        elif twist == 5:  # the same text again
            out.extend([good, good])
            continue
        elif twist == 6:  # as a Python repr (single quotes): a literal, never JSON
            out.append(repr(messages))
        elif twist == 7:  # the new turn without its comma
            out.append(_text(messages[:-1], separators)[:-1] + "x" + json.dumps(messages[-1]) + "]")
        elif twist == 8:  # valid JSON ending in a space, then a text that only extends it with "]" gone
            out.append(good + " ")
            out.append(good + ', {"tool_calls": [{"id": "w"}]}]')
        out.append(good)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_a_trace_reads_as_its_spans_read_alone(seed: int) -> None:
    rng = random.Random(seed)
    spans = []
    for n, text in enumerate(_histories(rng, rng.randrange(2, 25))):
        attrs: dict[str, Any] = {"acme.history": text}
        if rng.random() < 0.3:  # a second history key, interleaved
            attrs["acme.other"] = text[: len(text) // 2 + 1] + "]"
        spans.append(_span(n, attrs))
    calls = [_call(f"c{t}") for t in range(0, 30, 3)]  # some calls read, the others unread
    whole = _ordered(_unread(spans, calls))
    assert whole == _alone(spans, calls)
    assert whole  # each trace has unread items (the oracle is not vacuously equal)


def test_a_history_extended_turn_by_turn_counts_each_unread_call_on_every_span_it_shows() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "weather? " * 40}]
    spans = []
    for turn in range(6):
        messages.append({"role": "assistant", "tool_calls": [{"id": f"c{turn}", "function": {"name": "f"}}]})
        spans.append(_span(turn, {"acme.history": json.dumps(messages)}))
    unread = _unread(spans, [_call("c0"), _call("c1")])
    # c2..c5 are unread; c2 shows on spans 2-5, c3 on 3-5, …: 4 + 3 + 2 + 1 items
    assert unread == [
        Unread("acme.history → [].tool_calls", "attribute", 10, ("s0002", "s0003", "s0004", "s0005"))
    ]


def test_a_prefix_naming_a_call_only_under_an_unmentioned_key_is_read_once_the_text_mentions_one() -> None:
    first = [{"role": "user", "content": "x" * 300}, {"Tool Call": {"id": "k1", "name": "lookup"}}]
    second = [*first, {"tool_calls": [{"id": "c9"}]}]
    spans = [_span(0, {"acme.history": json.dumps(first)}), _span(1, {"acme.history": json.dumps(second)})]
    unread = _unread(spans, [])
    # the first text mentions no tool call as the check reads text, so it is not looked into; the
    # second does, and then both of its items count — the prefix's too
    assert {(u.shape, u.items, u.ids) for u in unread} == {
        ("acme.history → [].Tool Call", 1, ("s0001",)),
        ("acme.history → [].tool_calls", 1, ("s0001",)),
    }
