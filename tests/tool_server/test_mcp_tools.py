"""`traceladder tools serve`: a domain's tools as an MCP server, driven by the official `mcp`
client over both transports. Each call executes through the built-in loop's code and lands in a
real DuckDB store as an `execute_tool` span in the calling case's trace, arguments and result
captured; a bad call is a tool error result and the server goes on serving."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx2 as httpx
from conftest import ROOT, cli, out_value, rows
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from opentelemetry.trace import SpanKind

from traceladder.instrumentation.tracing import make_tracer_provider
from traceladder.produce.subject.toolbox import ToolBox
from traceladder.produce.tool_server.cases import LocalCase
from traceladder.produce.tool_server.http_transport import start
from traceladder.store.db import Store
from traceladder.store.exporter import DuckDBSpanExporter
from traceladder.suite.domain.registry import load_domain

ORDER = {"order_id": "W441"}  # in the retail fixtures
SPANS = (
    "SELECT trace_id, parent_span_id, name, status_code, attributes->>'$.\"gen_ai.tool.call.arguments\"', "
    "attributes->>'$.\"gen_ai.tool.call.result\"' FROM spans WHERE name LIKE 'execute_tool %' ORDER BY start_ns"
)
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def hexes(span) -> tuple[str, str]:
    context = span.get_span_context()
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def raw_call(url: str, name: str, arguments) -> dict:
    """A `tools/call` as a client with a bug would send it (arguments not an object)."""
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = httpx.post(url, json=body, headers=MCP_HEADERS, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["result"]


def test_http_one_url_per_case_each_call_a_span_in_that_cases_trace(tmp_path: Path) -> None:
    """As a run uses it: `start(domain, cases)` in-process, each case's toolbox under its root."""
    db, domain = tmp_path / "run.duckdb", load_domain("retail")
    with Store(db) as store:
        provider = make_tracer_provider(DuckDBSpanExporter(store))
        tracer = provider.get_tracer("test")
        roots = {
            case: tracer.start_span(f"invoke_agent {case}", kind=SpanKind.INTERNAL) for case in ("c-1", "c-2")
        }
        cases = {
            case: LocalCase(ToolBox(domain, domain.new_sandbox(), tracer, case, root))
            for case, root in roots.items()
        }
        with start(domain, cases.get) as server:

            async def agent(case: str, meta: dict | None = None) -> list:
                async with Client(server.url_for(case)) as client:
                    listed = (await client.list_tools()).tools
                    assert [t.name for t in listed] == list(domain.tool_names)
                    ok = await client.call_tool("get_order", ORDER, meta=meta)
                    unknown = await client.call_tool("launch_rocket", {"when": "now"})
                    return [ok, unknown]

            # c-2's client sends a traceparent of another trace in _meta: the call still joins c-2
            foreign = {"traceparent": f"00-{'ef' * 16}-{'12' * 8}-01"}
            first, second = asyncio.run(agent("c-1")), asyncio.run(agent("c-2", foreign))
            broken = raw_call(server.url_for("c-1"), "get_order", '{"order_id": ')
            listed = raw_call(server.url_for("c-1"), "get_order", ["W441"])
            assert httpx.post(server.url_for("c-9"), json={}, headers=MCP_HEADERS).status_code == 404
        for root in roots.values():
            root.end()
        provider.force_flush()
        provider.shutdown()
    for ok, unknown in (first, second):
        assert not ok.is_error and json.loads(ok.content[0].text)["order_id"] == "W441"
        assert unknown.is_error and json.loads(unknown.content[0].text)["error"]["type"] == "unknown_tool"
    assert broken["isError"] and json.loads(broken["content"][0]["text"])["error"]["type"] == "invalid_json"
    assert listed["isError"]
    spans = rows(db, SPANS)
    (c1_trace, c1_root), (c2_trace, c2_root) = hexes(roots["c-1"]), hexes(roots["c-2"])
    by_case = {(t, p) for t, p, *_ in spans}
    assert by_case == {(c1_trace, c1_root), (c2_trace, c2_root)}  # every call under its own case's root
    names = [(name, status) for _, _, name, status, _, _ in spans]
    assert names.count(("execute_tool get_order", "UNSET")) == 2
    assert names.count(("execute_tool launch_rocket", "ERROR")) == 2
    arguments = [
        args for t, _, name, _, args, _ in spans if t == c1_trace and name == "execute_tool get_order"
    ]
    assert arguments == ['{"order_id": "W441"}', '{"order_id": ', '["W441"]']  # as sent, broken or not
    results = [r for _, _, name, status, _, r in spans if status == "UNSET"]
    assert all(json.loads(r)["order_id"] == "W441" for r in results)


def test_stdio_case_from_the_environment_spans_in_the_store(tmp_path: Path) -> None:
    db = tmp_path / "tools.duckdb"
    trace_id, parent = "ab" * 16, "cd" * 8
    env = {**os.environ, "TRACELADDER_CASE_ID": "fc-d2-001", "TRACEPARENT": f"00-{trace_id}-{parent}-01"}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "traceladder", "tools", "serve", "--domain", "retail", "--db", str(db)],
        env=env,
    )  # fmt: skip

    async def agent() -> list:
        async with Client(server) as client:
            return [
                await client.call_tool("get_order", ORDER),
                await client.call_tool("get_order", {"order_id": 441}),  # not a string: the schema says
                await client.call_tool("no_such_tool", {}),
                await client.call_tool("get_order", ORDER),  # still serving
            ]

    results = asyncio.run(agent())
    assert [r.is_error for r in results] == [False, True, True, False]
    assert json.loads(results[1].content[0].text)["error"]["type"] == "invalid_arguments"
    spans = rows(db, SPANS)
    assert [(t, p, name) for t, p, name, *_ in spans] == [
        (trace_id, parent, "execute_tool get_order"),
        (trace_id, parent, "execute_tool get_order"),
        (trace_id, parent, "execute_tool no_such_tool"),
        (trace_id, parent, "execute_tool get_order"),
    ]
    assert spans[0][4] == json.dumps(ORDER) and json.loads(spans[0][5])["user_id"] == "U101"


def test_http_from_the_cli_a_case_without_a_trace_gets_one_of_its_own(tmp_path: Path) -> None:
    """Standalone: a call with no traceparent joins one root span per case, `traceladder.case.id`
    on it — so the case's calls share a trace, judged against that case."""
    db = tmp_path / "http.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "traceladder", "tools", "serve", "--transport", "http", "--domain", "retail",
         "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        template = proc.stdout.readline().strip().removeprefix("mcp=")  # type: ignore[union-attr]
        assert template.startswith("http://127.0.0.1:") and template.endswith("/cases/{case_id}/mcp"), (
            template
        )

        async def agent() -> None:
            async with Client(template.format(case_id="fc-d3-001")) as client:
                for _ in range(2):
                    assert not (await client.call_tool("get_order", ORDER)).is_error

        asyncio.run(agent())
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    roots = rows(db, "SELECT trace_id, span_id, attributes->>'$.\"traceladder.case.id\"' FROM spans "
                     "WHERE parent_span_id IS NULL")  # fmt: skip
    assert [r[2] for r in roots] == ["fc-d3-001"]
    assert {(t, p) for t, p, *_ in rows(db, SPANS)} == {roots[0][:2]}


def test_a_hostile_schema_is_served_as_data_and_its_calls_are_tool_errors(tmp_path: Path) -> None:
    """A declarative domain whose definitions hold a backtracking pattern: the tools are listed,
    the call is answered (an error result, matched in linear time), nothing hangs. A remote $ref
    makes the folder an invalid domain (the trust boundary): refused in one line, nothing fetched."""
    folder = tmp_path / "hostile"
    shutil.copytree(ROOT / "examples" / "flights", folder)
    tools = json.loads((folder / "tools.json").read_text())
    tools[0]["function"]["parameters"]["properties"]["origin"] = {"type": "string", "pattern": "^(a+)+$"}
    (folder / "tools.json").write_text(json.dumps(tools))
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "traceladder", "tools", "serve", "--domain", str(folder), "--db", str(tmp_path / "h.duckdb"),
              "--case", "x"], env=dict(os.environ),
    )  # fmt: skip

    async def agent() -> list:
        async with Client(server) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == ["search_flights", "book_flight"]
            return [
                await client.call_tool(
                    "search_flights", {"origin": "a" * 40 + "!", "destination": "JFK", "date": "x"}
                ),
            ]

    assert [r.is_error for r in asyncio.run(agent())] == [True]

    tools[1]["function"]["parameters"]["properties"]["seat"] = {"$ref": "http://127.0.0.1:9/evil.json"}
    (folder / "tools.json").write_text(json.dumps(tools))
    refused = subprocess.run(
        [sys.executable, "-m", "traceladder", "tools", "serve", "--domain", str(folder), "--case", "x",
         "--db", str(tmp_path / "r.duckdb")], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "$ref" in refused.stderr, refused.stderr


def test_without_the_mcp_extra_one_line_names_it(tmp_path: Path) -> None:
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text("raise ImportError('not installed here')\n")
    done = cli("tools", "serve", "--domain", "retail", "--case", "x",
               env={"PYTHONPATH": str(tmp_path)})  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "pip install 'traceladder[mcp]'" in done.stderr


def test_a_run_agent_mounting_the_stdio_server_records_its_calls_in_the_cases(tmp_path: Path) -> None:
    """`run --agent-cmd` with an agent that mounts `tools serve` over stdio: the server forwards
    each call to the run's sandbox for the case, so the full ladder judges it like the loop's."""
    db = tmp_path / "run.duckdb"
    agent = f"{sys.executable} {ROOT / 'examples' / 'agents' / 'mcp_agent.py'}"
    done = cli("run", "--agent-cmd", agent, "--model", "sim:oracle", "--db", str(db),
               "--case", "fc-d2-001", "--case", "fc-d4-001", cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    assert rows(db, "SELECT DISTINCT verdict FROM case_results WHERE run_id = ?", [run_id]) == [("PASS",)]
    placed = rows(db, "SELECT count(*), count(DISTINCT s.trace_id) FROM spans s JOIN case_runs c "
                      "ON c.trace_id = s.trace_id WHERE s.name LIKE 'execute_tool %'")  # fmt: skip
    assert placed[0] == (3, 2)  # request_address_update; request_cancel, confirm_action (its chain)
    # the chain confirmed in the run's sandbox: the ledger the state rung reads
    assert rows(
        db,
        "SELECT status FROM rung_results r JOIN case_runs c ON c.trace_id = r.trace_id "
        "WHERE c.case_id = 'fc-d4-001' AND r.rung_name = 'state'",
    ) == [("pass",)]


def test_bad_invocations_are_one_line_and_exit_2(tmp_path: Path) -> None:
    import socket

    env = {k: v for k, v in os.environ.items() if k not in ("TRACELADDER_CASE_ID", "TRACELADDER_TOOLS_URL")}
    no_case = cli("tools", "serve", "--domain", "retail", "--db", str(tmp_path / "a.duckdb"), env=env)
    assert no_case.returncode == 2 and "TRACELADDER_CASE_ID" in no_case.stderr, no_case.stderr
    bad_parent = cli("tools", "serve", "--case", "x", "--db", str(tmp_path / "b.duckdb"),
                     env={**env, "TRACEPARENT": "00-zz-yy-01"})  # fmt: skip
    assert bad_parent.returncode == 2 and "not a W3C traceparent" in bad_parent.stderr, bad_parent.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = cli(
            "tools", "serve", "--transport", "http", "--port", port, "--db", str(tmp_path / "c.duckdb")
        )
    assert busy.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr, busy.stderr
    unknown = cli("tools", "serve", "--domain", "no-such-domain", "--case", "x")
    assert unknown.returncode == 2 and "unknown domain" in unknown.stderr
    for done in (no_case, bad_parent, busy, unknown):
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
