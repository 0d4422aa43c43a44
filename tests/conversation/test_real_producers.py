"""A real producer's multi-turn conversation: a plain `openai` loop carrying one messages list,
instrumented with OpenInference, against the scripted model on 127.0.0.1, each turn its own trace,
written by the store's own exporter. Each turn's calls are exactly what the model sent in that
turn; the turns group into one conversation — by the session id when the producer sets one, else
through the history; no per-trace check fires on an earlier turn's call."""

from __future__ import annotations

import contextlib
from pathlib import Path

import duckdb
import openai
import pytest
from openinference.instrumentation import using_session
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from conversation.multi_turn_model import PLAN, USER, MultiTurnModel
from tests.conftest import cli
from traceladder.store.db import Store
from traceladder.store.exporter import DuckDBSpanExporter

POLICY = "[defaults]\nmax_tool_calls = 2\nforbid_duplicate_calls = true\n"


def _converse(db: Path, session: str | None) -> tuple[MultiTurnModel, list[str]]:
    """Four turns through the real client; returns the model and each turn's trace id."""
    provider = TracerProvider(resource=Resource.create({"service.name": "support-agent"}))
    traces: list[str] = []
    with Store(db) as store, MultiTurnModel() as model:
        provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(store, source="otlp")))
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            client = openai.OpenAI(base_url=model.url, api_key="test", max_retries=0, timeout=10)
            tracer = provider.get_tracer("support-agent")
            messages: list[dict] = [{"role": "system", "content": "You are a support agent."}]
            for turn, text in enumerate(USER):
                # no span is current between turns, so each turn's root starts a trace of its own
                with (
                    using_session(session) if session else contextlib.nullcontext(),
                    tracer.start_as_current_span(f"turn {turn}") as root,
                ):
                    traces.append(format(root.get_span_context().trace_id, "032x"))
                    messages.append({"role": "user", "content": text})
                    while True:
                        reply = (
                            client.chat.completions.create(model="m", messages=messages).choices[0].message
                        )
                        messages.append(reply.model_dump(exclude_none=True))
                        if not reply.tool_calls:
                            break
                        for call in reply.tool_calls:
                            messages.append({"role": "tool", "tool_call_id": call.id, "content": "ok"})
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
    return model, traces


@pytest.mark.parametrize("session", [None, "session-7"])
def test_openinference_plain_loop_turn_by_turn(tmp_path: Path, session: str | None) -> None:
    db = tmp_path / "s.duckdb"
    model, traces = _converse(db, session)
    assert [len(model.sent[t]) for t in range(4)] == [len(p) for p in PLAN]
    with duckdb.connect(str(db), read_only=True) as conn:
        for turn, trace_id in enumerate(traces):
            got = conn.execute(
                "SELECT call_id FROM tool_calls WHERE trace_id = ? ORDER BY ordinal", [trace_id]
            ).fetchall()
            assert [c for (c,) in got] == model.sent[turn], f"turn {turn}"
        rows = conn.execute(
            "SELECT conversation_id, trace_id, turn, linked_by FROM conversations ORDER BY turn"
        ).fetchall()
    expected_id = session or traces[0]
    how = ["session.id"] * 4 if session else ["none", "history", "history", "history"]
    assert rows == [(expected_id, t, i, how[i]) for i, t in enumerate(traces)]
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    r = cli("evaluate", "--db", str(db), "--policy", str(policy))
    assert r.returncode == 0, r.stderr
    with duckdb.connect(str(db), read_only=True) as conn:
        assert conn.execute("SELECT code FROM findings").fetchall() == []
        assert conn.execute("SELECT verdict, turns FROM conversation_results").fetchall() == [("PASS", 4)]
