"""What the HTML report's tests share: hostile strings, the case file's requests, and a live page
built from real spans (tests/reporting/test_html_report.py and its browser tests)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, cli, cli_in_process, out_values
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

HOSTILE_TOOL = "<script>alert('tool')</script>"
HOSTILE_TEXT = "</script><script>alert('text')</script><!--"
HOSTILE_ARG = '<img src=x onerror="alert(1)">'
CASES_FILE = ROOT / "traceladder" / "suite" / "domain" / "retail" / "data" / "retail_fc.jsonl"


def instruction(case_id: str) -> str:
    """What the user asked in the case, as the case file has it (the oracle: not read from spans)."""
    for line in CASES_FILE.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["id"] == case_id:
            return case["instruction"]
    raise AssertionError(case_id)


def _live_store(tmp_path: Path) -> Path:
    """Two live traces of deploy shop 1.0, judged by rung 1 against the retail tools: one calls a
    tool named like a script tag (UNKNOWN_TOOL), one a real tool correctly."""
    db, memory = tmp_path / "live.duckdb", InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop", "service.version": "1.0"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("shop")
    for tool, args in ((HOSTILE_TOOL, json.dumps({"x": HOSTILE_ARG})), ("get_order", '{"order_id": "W441"}')):
        with tracer.start_as_current_span(
            "invoke_agent shop", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.arguments": args,
                "gen_ai.tool.call.result": HOSTILE_TEXT,
            }
            with tracer.start_as_current_span(f"execute_tool {tool}", attributes=attrs):
                pass
    (tmp_path / "t.pb").write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())
    assert cli_in_process("ingest", "--db", str(db), str(tmp_path / "t.pb")).returncode == 0  # set-up
    done = cli_in_process(
        "evaluate", "--db", str(db), "--domain", "retail"
    )  # set-up: the page is the subject
    assert done.returncode == 0, done.stderr
    return db


def live_page(folder: Path) -> Path:
    """The `--live` HTML page of `_live_store`'s two judged traces, written under `folder`."""
    db = _live_store(folder)
    done = cli("report", "--db", str(db), "--format", "html", "--live", "--since", "2")
    assert done.returncode == 0, done.stderr
    path = Path(out_values(done)["html_path"])
    assert path.parent == folder / "reports" and path.name.startswith("live-")
    return path
