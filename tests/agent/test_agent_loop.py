"""The loop's contracts that the suite does not exercise on its own: parallel calls, timeouts,
retry timing, --dimension and --repeat."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2
import openai
from opentelemetry.sdk.trace import TracerProvider

from tests.conftest import cli, cli_in_process
from traceladder.produce.agent.client import choose_model
from traceladder.produce.agent.config import AgentConfig, RetryPolicy
from traceladder.produce.agent.loop import Endpoint, run_case
from traceladder.produce.agent.retry import retry_after_seconds
from traceladder.produce.agent.runner import RunOptions, run_suite
from traceladder.store import Store
from traceladder.suite.cases import load_cases


def scripted_client(responses: list[dict]) -> tuple[openai.OpenAI, list[dict]]:
    """A real openai client whose server replies with these chat-completion messages in turn."""
    seen: list[dict] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        seen.append(body)
        message = responses[len(seen) - 1]
        payload = {"id": f"r{len(seen)}", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}  # fmt: skip
        return httpx2.Response(200, json=payload)

    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    return openai.OpenAI(
        api_key="k", base_url="http://scripted.invalid/v1", http_client=http, max_retries=0
    ), seen


def test_parallel_tool_calls_run_in_order_and_results_follow(retail):
    calls = [
        {
            "id": "a",
            "type": "function",
            "function": {"name": "get_order", "arguments": '{"order_id": "W441"}'},
        },
        {"id": "b", "type": "function", "function": {"name": "get_user", "arguments": '{"user_id": "U101"}'}},
        {
            "id": "c",
            "type": "function",
            "function": {"name": "check_stock", "arguments": '{"product_id": "P207"}'},
        },
    ]
    client, seen = scripted_client([{"role": "assistant", "content": None, "tool_calls": calls},
                                    {"role": "assistant", "content": "done"}])  # fmt: skip
    case = load_cases()[0]
    outcome = run_case(case, domain=retail, sandbox=retail.new_sandbox(), client_factory=lambda: client,
                       config=AgentConfig(model="scripted"), endpoint=Endpoint("openai", "scripted.invalid", None),
                       tracer=TracerProvider().get_tracer("t"), run_id="r")  # fmt: skip
    assert outcome.status == "ok" and outcome.final_text == "done"
    history = seen[1]["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "tool", "tool", "tool"]
    assert [m["tool_call_id"] for m in history[3:]] == ["a", "b", "c"]
    assert json.loads(history[3]["content"])["order_id"] == "W441"
    assert json.loads(history[5]["content"])["product_id"] == "P207"
    assert seen[0]["messages"][1] == {"role": "user", "content": case.instruction}  # only the instruction


def test_case_timeout_is_an_agent_error_and_the_batch_continues(tmp_path, retail):
    with Store(tmp_path / "t.duckdb") as store:
        choice = choose_model("sim:oracle", None)
        config = AgentConfig(model=choice.model, case_timeout_s=0.25)
        options = RunOptions(case_ids=("fc-d4-001", "fc-d1-001"), sim_delay_s=0.15, concurrency=2)
        summary = run_suite(store, choice, config, options, domain=retail)
        rows = store.fetchall("SELECT case_id, agent_status, error_type FROM case_runs ORDER BY 1")
    assert summary.finished == 2
    assert rows == [("fc-d1-001", "error", "timeout"), ("fc-d4-001", "error", "timeout")]


def test_retry_after_forms_and_backoff_bounds():
    assert retry_after_seconds(httpx2.Headers({"retry-after": "3"})) == 3.0
    assert retry_after_seconds(httpx2.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_after_seconds(httpx2.Headers({"retry-after": when})) <= 30  # type: ignore[operator]
    assert retry_after_seconds(httpx2.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx2.Headers({})) is None
    policy = RetryPolicy(max_attempts=6, base_delay_s=0.5, max_delay_s=4.0)
    assert [policy.delay(n, None) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert policy.delay(1, 60.0) == 4.0 and policy.delay(1, 0.0) == 0.0


def test_dimension_and_repeat(tmp_path):
    db = tmp_path / "d.duckdb"
    # the report `run` writes would be read by nobody: the run's selection is read from the store,
    # judged by one `evaluate` (decision 691)
    result = cli(
        "run", "--model", "sim:oracle", "--dimension", "D4", "--repeat", "2", "--db", str(db), "--no-report"
    )
    assert result.returncode == 0, result.stderr
    assert cli_in_process("evaluate", "--db", str(db)).returncode == 0
    report = json.loads(cli_in_process("report", "--db", str(db), "--format", "json").stdout)  # read-back
    assert report["summary"]["case_count"] == 36
    assert {r["dimension"] for r in report["results"]} == {"D4"}
    assert sorted({r["repeat_index"] for r in report["results"]}) == [0, 1]
    assert report["summary"]["verdict_counts"]["PASS"] == 36
    bad = cli("run", "--dimension", "D9", "--db", str(db))
    assert bad.returncode == 2 and "unknown dimension D9" in bad.stderr
