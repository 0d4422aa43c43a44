"""Live evaluation harness end to end: a real instrumented agent (`live_agent.py`: the real `openai`
client, traced by the real `openinference-instrumentation-openai`, exported by the real OTLP/HTTP
exporter) talks to the scripted model (`scripted_live_model.LiveModel`) and sends its traces to a real
`traceladder serve`; the store then holds every trace, its tool calls and its tool definitions."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import rows
from live_agent import TOOLS
from receiver import ServeProcess
from scripted_live_model import LiveModel

AGENT = Path(__file__).resolve().parents[1] / "live_agent.py"
RUNS = {"1.0": 6, "1.1": 6}  # version -> conversations (numbered 0..N-1)


def start_agent(
    endpoint: str, model_url: str, version: str, conversations: int, seed: int
) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(AGENT), "--endpoint", endpoint, "--model-url", model_url, "--version", version,
         "--service", "retail-agent", "--conversations", str(conversations), "--seed", str(seed)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_live_agents_of_two_versions_land_in_the_store(tmp_path: Path) -> None:
    db = tmp_path / "live.duckdb"
    conversations: dict[str, tuple[str, dict[str, Any]]] = {}  # trace id -> (version, agent's record)
    with ServeProcess(db) as serve, LiveModel() as model:
        endpoint = f"http://127.0.0.1:{serve.port}"
        agents = {v: start_agent(endpoint, model.url, v, n, seed) for seed, (v, n) in enumerate(RUNS.items())}
        try:
            outputs = {v: (proc.communicate(timeout=60), proc.returncode) for v, proc in agents.items()}
        finally:
            for proc in agents.values():
                if proc.stdout is not None and not proc.stdout.closed:  # not reaped: timed out
                    proc.kill()
                    proc.communicate()
        for version, ((out, err), returncode) in outputs.items():
            assert returncode == 0, (version, err)
            for line in out.splitlines():
                record = json.loads(line)
                conversations[record["trace_id"]] = (version, record)
        code, err = serve.stop()
    assert code == 0, err

    # What the agents did is the script: every call the model sent, executed and fed back.
    assert len(conversations) == sum(RUNS.values())
    for version, record in conversations.values():
        n = record["conversation"]
        assert [(c["name"], c["arguments"]) for c in record["calls"]] == LiveModel.plan(version, n)
        assert record["final_text"] == LiveModel.final_text(version, n)
    assert len(model.requests) == sum(
        len(LiveModel.plan(v, r["conversation"])) + 1 for v, r in conversations.values()
    )

    # Traces: one per conversation, each with one AGENT root, the resource of its version.
    traces = rows(db, """
        SELECT trace_id, list(DISTINCT resource->>'$."service.version"'), list(DISTINCT resource->>'$."service.name"'),
               list(DISTINCT resource->>'$."deployment.environment.name"'),
               count(*) FILTER (WHERE coalesce(parent_span_id, '') = ''),
               any_value(name) FILTER (WHERE coalesce(parent_span_id, '') = ''),
               any_value(attributes->>'$."openinference.span.kind"') FILTER (WHERE coalesce(parent_span_id, '') = ''),
               any_value(attributes->>'$."agent.name"') FILTER (WHERE coalesce(parent_span_id, '') = '')
        FROM spans GROUP BY trace_id
    """)  # fmt: skip
    assert {t[0]: t[1] for t in traces} == {tid: [v] for tid, (v, _) in conversations.items()}
    for trace in traces:
        assert trace[2:] == (["retail-agent"], ["prod"], 1, "retail-agent", "AGENT", "retail-agent"), trace

    # Tool calls: the exact argument strings the model sent, with the model's call ids.
    stored: dict[str, list[tuple[str, str, str]]] = {}
    for trace_id, name, call_id, args in rows(
        db, "SELECT trace_id, tool_name, call_id, arguments_raw FROM tool_calls ORDER BY trace_id, ordinal"
    ):
        stored.setdefault(trace_id, []).append((name, call_id, args))
    assert set(stored) == set(conversations)
    for trace_id, (version, record) in conversations.items():
        n = record["conversation"]
        want = [(name, LiveModel.call_id(version, n, turn), args)
                for turn, (name, args) in enumerate(LiveModel.plan(version, n))]  # fmt: skip
        assert stored[trace_id] == want, (version, n)
    broken = [(conversations[t][0], c) for t, calls in stored.items() for c in calls if '"orderId"' in c[2]]
    assert len(broken) == 3 and {v for v, _ in broken} == {"1.1"}
    assert all(c[0] == "get_order" and c[2] == '{"orderId": "W123"}' for _, c in broken)

    # Tool definitions: the tool list the agent sent, captured from every trace.
    want_defs = {
        t["function"]["name"]: (t["function"]["description"], t["function"]["parameters"]) for t in TOOLS
    }
    defs: dict[str, dict[str, tuple[str, Any]]] = {}
    for trace_id, name, description, parameters in rows(
        db, "SELECT trace_id, name, description, parameters FROM tool_definitions"
    ):
        assert name not in defs.setdefault(trace_id, {}), (trace_id, name)
        defs[trace_id][name] = (description, json.loads(parameters))
    assert defs == {trace_id: want_defs for trace_id in conversations}


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{url}/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        with e:
            return e.code, json.loads(e.read())


@pytest.mark.parametrize(
    ("model", "header", "want"),
    [
        ("retail-1.0", None, '{"order_id": "W123"}'),
        ("retail-1.1", None, '{"orderId": "W123"}'),
        ("retail-1.0", "1.1", '{"orderId": "W123"}'),  # the header wins over the model name
    ],
)
def test_the_model_decides_by_version_and_conversation(model: str, header: str | None, want: str) -> None:
    headers = {LiveModel.VERSION_HEADER: header} if header else {}
    messages = [{"role": "user", "content": "Where is W123? (conversation #5)"}]
    with LiveModel() as server:
        status, body = post(server.url, {"model": model, "messages": messages}, headers)
        assert status == 200
        choice = body["choices"][0]
        assert choice["finish_reason"] == "tool_calls"
        assert choice["message"]["tool_calls"][0]["function"] == {"name": "get_order", "arguments": want}
        status, body = post(server.url, {"model": "gpt-4o", "messages": messages})
        assert status == 400 and body["error"]["type"] == "invalid_request_error"
