"""The real producers' four-turn conversations in tests/fixtures/conversations, read through the CLI.

Every fixture was captured by `scripts/capture_producers/capture_conversation.py` from a real
framework (LangGraph with a checkpointer, the Agents SDK with a Session, pydantic-ai with
`message_history`, Strands with one Agent, a plain `openai` loop) against the scripted model; its
`expected.json` holds, per turn, the calls the model **sent** in that turn and the traces that turn
wrote. `observe` ingests one fixture into a real store, evaluates it with `POLICY` and reads back
what the store made of each turn — the tests and the docs' table both use it. The CLI is not the
subject here, so its commands run in-process (tests/inprocess_cli.py); `ingest` and `evaluate` keep
their real-CLI tests elsewhere (docs/testing.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
from shared_suites import built_once

from tests.conftest import cli_in_process

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "conversations"
NAMES = sorted(str(p.parent.relative_to(FIXTURES)) for p in FIXTURES.glob("*/*/expected.json"))

# Per turn: a step budget of 2 and no duplicates (turn 4 makes two calls: exactly at the budget);
# across turns: a cancellation request must be confirmed later in the conversation.
POLICY = """\
[defaults]
max_tool_calls = 2
forbid_duplicate_calls = true

[conversation]
[[conversation.confirm]]
tool = "request_cancel"
by = "confirm_action"
"""


def expected(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name / "expected.json").read_text())


def sent_tools(name: str) -> list[dict[str, Any]]:
    """The tool list the framework sent in its first request (what a user would give `--tools`)."""
    first = json.loads((FIXTURES / name / "model-requests.json").read_text())[0]["body"]
    return [t for t in first["tools"]]


def _reader(db: Path) -> Any:
    """`sql(query)` → rows as dicts, on a read-only connection to the store the CLI wrote."""
    conn = duckdb.connect(str(db), read_only=True)

    def sql(query: str) -> list[dict[str, Any]]:
        cursor = conn.execute(query)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    return conn, sql


@dataclass
class Observed:
    """What the store made of one fixture."""

    calls: dict[str, list[tuple[str, str | None, str]]]  # trace → (tool, id, arguments) in order
    conversation: dict[str, tuple[str, int, str]]  # trace → (conversation id, turn, linked_by)
    verdicts: dict[str, str]  # trace → verdict
    model_turns: dict[str, int]  # trace → its model requests
    findings: list[tuple[str, str]]  # (trace, code) of every per-trace finding
    prior: dict[str, list[tuple[str | None, str | None]]]  # trace → (call id, trace that made it)
    results: list[dict[str, Any]]  # conversation_results rows
    conversation_findings: list[dict[str, Any]]


def _store(name: str, workdir: Path) -> Path:
    """The fixture ingested and evaluated into a store of its own, once per test session: `workdir`
    is shared by the session's workers (tests/shared_suites.py), and the first to ask builds it."""
    folder = workdir / name.replace("/", "_")
    db = folder / "store.duckdb"

    def build() -> dict[str, Any]:
        ingest = cli_in_process("ingest", "--db", str(db), str(FIXTURES / name / "collector-traces.jsonl"))
        assert ingest.returncode == 0, ingest.stderr
        policy = folder / "conversation-policy.toml"
        policy.write_text(POLICY, encoding="utf-8")
        tools = folder / "tools.json"
        tools.write_text(json.dumps(sent_tools(name)), encoding="utf-8")
        result = cli_in_process("evaluate", "--db", str(db), "--policy", str(policy), "--tools", str(tools))
        assert result.returncode == 0, result.stderr
        return {}

    built_once(folder, build)
    return db


@cache
def observe(name: str, workdir: Path) -> Observed:
    """What the store made of the fixture, read once per process from the session's store."""
    db = _store(name, workdir)
    conn, _sql = _reader(db)
    calls: dict[str, list[tuple[str, str | None, str]]] = {}
    for r in _sql(
        "SELECT trace_id, tool_name, call_id, arguments_raw FROM tool_calls ORDER BY trace_id, ordinal"
    ):
        calls.setdefault(r["trace_id"], []).append((r["tool_name"], r["call_id"], r["arguments_raw"]))
    prior: dict[str, list[tuple[str | None, str | None]]] = {}
    for r in _sql("SELECT trace_id, call_id, earlier_trace_id FROM prior_calls ORDER BY trace_id, ordinal"):
        prior.setdefault(r["trace_id"], []).append((r["call_id"], r["earlier_trace_id"]))
    observed = Observed(
        calls,
        {
            r["trace_id"]: (r["conversation_id"], r["turn"], r["linked_by"])
            for r in _sql("SELECT conversation_id, trace_id, turn, linked_by FROM conversations")
        },
        {r["trace_id"]: r["verdict"] for r in _sql("SELECT trace_id, verdict FROM results")},
        {r["trace_id"]: r["model_turns"] for r in _sql("SELECT trace_id, model_turns FROM traces")},
        [(r["trace_id"], r["code"]) for r in _sql("SELECT trace_id, code FROM findings")],
        prior,
        _sql("SELECT conversation_id, verdict, deciding_turn, turns FROM conversation_results"),
        _sql("SELECT conversation_id, turn, finding_class FROM conversation_findings ORDER BY turn"),
    )
    conn.close()
    return observed


def turn_traces(name: str, observed: Observed) -> list[list[str]]:
    """Per turn, the traces it wrote that made a model request, in the order they were exported (a
    framework's set-up trace — OpenLLMetry's `create_agent` span in turn 1 — is no turn)."""
    return [
        [t for t in turn["trace_ids"] if observed.model_turns.get(t, 0) > 0]
        for turn in expected(name)["turns"]
    ]


def turn_calls(observed: Observed, traces: list[str]) -> list[tuple[str, str | None, str]]:
    return [call for t in traces for call in observed.calls.get(t, [])]
