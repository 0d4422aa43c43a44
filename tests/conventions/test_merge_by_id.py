"""One call id, one call: copies of a call the earlier merge steps leave apart are merged (issue 32).

Built from real captures (tests/fixtures/producers): the same trace with the history rewritten the
way other producers write it — the OpenAI Agents SDK on the Responses API splits a parallel pair
into two assistant messages in the next request; Bedrock's botocore instrumentation writes one
log record per call of the history. Every variant must read exactly the calls the scripted model
sent: one call counted once, so no false DUPLICATE_CALL.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

from tests.conventions.test_conventions import load
from tests.producers import FIXTURES, expected_calls
from traceladder.extract.conventions import extract_trace
from traceladder.extract.conventions.merge import one_per_id
from traceladder.extract.conventions.views import ExtractedCall

_MESSAGE = re.compile(r"^llm\.input_messages\.(\d+)\.(.*)$")


def _split_pair(attrs: dict, at: int) -> dict:
    """OpenInference input messages with the assistant message `at` (two tool calls) written as
    two assistant messages of one call each; later messages move one place down."""
    out = {}
    for key, value in attrs.items():
        m = _MESSAGE.match(key)
        if m is None:
            out[key] = value
            continue
        i, rest = int(m.group(1)), m.group(2)
        if i < at:
            out[key] = value
        elif i > at:
            out[f"llm.input_messages.{i + 1}.{rest}"] = value
        elif rest.startswith("message.tool_calls.1."):
            out[
                f"llm.input_messages.{at + 1}.message.tool_calls.0.{rest.removeprefix('message.tool_calls.1.')}"
            ] = value
            out[f"llm.input_messages.{at + 1}.message.role"] = "assistant"
        else:
            out[key] = value
    return out


def _calls(found: list[ExtractedCall]) -> list[tuple[str, str | None, str | None]]:
    return [(c.tool_name, c.call_id, c.arguments_raw) for c in found]


def _sent(fixture: str) -> list[tuple[str, str | None, str | None]]:
    return [(name, call_id, args) for name, call_id, args, _ in expected_calls(FIXTURES / fixture)]


def test_a_parallel_pair_split_into_two_assistant_messages_is_read_once():
    spans, logs = load("openinference/parallel")
    assert _calls(extract_trace(spans, logs).calls) == _sent("openinference/parallel")
    split = [
        dataclasses.replace(s, attributes=_split_pair(s.attributes, 2))
        if "llm.input_messages.2.message.tool_calls.1.tool_call.id" in s.attributes
        else s
        for s in spans
    ]
    assert split != spans
    found = extract_trace(split, logs).calls
    assert _calls(found) == _sent("openinference/parallel")
    assert [c.ordinal for c in found] == [1, 2, 3]
    # the results the tool messages fed back still reach their calls
    assert all(c.result is not None for c in found)


def _record_id(body: object, span_id: str, n: int) -> str:
    return hashlib.sha256(f"{span_id}/{n}/{json.dumps(body)}".encode()).hexdigest()[:32]


def test_a_log_record_history_repeating_each_call_on_its_own_is_read_once():
    spans, logs = load("otel-openai-v2-default/parallel")
    assert _calls(extract_trace(spans, logs).calls) == _sent("otel-openai-v2-default/parallel")
    rewritten = []
    for record in logs:
        calls = record.body.get("tool_calls") if isinstance(record.body, dict) else None
        if record.event_name == "gen_ai.assistant.message" and calls and len(calls) > 1:
            # one assistant record per call, as botocore writes a Converse history
            for n, call in enumerate(calls):
                body = {**record.body, "tool_calls": [call]}
                rewritten.append(
                    dataclasses.replace(record, record_id=_record_id(body, record.span_id, n), body=body)
                )
        else:
            rewritten.append(record)
        if record.event_name == "gen_ai.assistant.message" and calls:
            # and the whole message once more, as a history that repeats each call
            rewritten.append(
                dataclasses.replace(record, record_id=_record_id(record.body, record.span_id, 9))
            )
    assert len(rewritten) > len(logs)
    found = extract_trace(spans, rewritten).calls
    assert _calls(found) == _sent("otel-openai-v2-default/parallel")


def _row(
    ordinal: int, name: str, call_id: str | None, turn: int | None, origin: str, **over
) -> ExtractedCall:
    base = ExtractedCall(ordinal, name, call_id, '{"a": 1}', None, "unknown", None, "c", origin, f"s{ordinal}",
                         None, None, turn, 0 if turn else None, ordinal, ordinal)  # fmt: skip
    return base._replace(**over)


def test_ids_a_producer_reuses_in_every_response_stay_apart_and_an_execution_joins_its_call():
    # `call_0` in two responses: two calls, never merged
    reused = [_row(1, "get", "call_0", 1, "response"), _row(2, "get", "call_0", 2, "response")]
    assert one_per_id(reused) == reused
    # a second execution span of one call (an instrumentation's TOOL span beside our own
    # execute_tool span) that bound to nothing: one call, executed, its result kept
    executed = _row(2, "get", "call_0", None, "tool_span", status="ok", result="42", span_id="exec")
    merged = one_per_id(
        [_row(1, "get", "call_0", 1, "response"), executed, _row(3, "put", "call_1", 2, "response")]
    )
    assert [(c.ordinal, c.tool_name, c.status, c.result, c.span_id, c.origin) for c in merged] == [
        (1, "get", "ok", "42", "exec", "response"),
        (2, "put", "unknown", None, "s3", "response"),
    ]
    # a different tool under the same id is not a copy
    other = [_row(1, "get", "call_0", None, "history"), _row(2, "put", "call_0", None, "history")]
    assert one_per_id(other) == other
