"""The real producer captures in tests/fixtures/producers: listing them and reading their truth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "producers"


def scenarios() -> list[Path]:
    return sorted(p.parent for p in FIXTURES.glob("*/*/expected.json"))


def scenario_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def expected(path: Path) -> dict[str, Any]:
    return json.loads((path / "expected.json").read_text())


def protobuf_bodies(path: Path) -> list[tuple[str, bytes]]:
    """(signal path, body) for every captured OTLP/HTTP protobuf request, in capture order."""
    out = [("/v1/traces", p.read_bytes()) for p in sorted(path.glob("traces-*.pb"))]
    return out + [("/v1/logs", p.read_bytes()) for p in sorted(path.glob("logs-*.pb"))]


def json_bodies(path: Path) -> list[tuple[str, bytes]]:
    out = []
    for name, signal in (("traces.json", "/v1/traces"), ("logs.json", "/v1/logs")):
        if (path / name).exists():
            out += [(signal, json.dumps(r).encode()) for r in json.loads((path / name).read_text())]
    return out


def expected_calls(path: Path) -> list[tuple[Any, ...]]:
    """(name, id, arguments_raw, result) of the calls the scripted model really sent, in order."""
    return [(c["name"], c["id"], c["arguments_raw"], c["result"]) for c in expected(path)["calls"]]


def trace_id(path: Path) -> str:
    """The trace the scenario recorded (each capture is one agent run: one trace)."""
    from traceladder.decode import decode_traces

    body = sorted(path.glob("traces-*.pb"))[0].read_bytes()
    (only,) = set(decode_traces(body, "application/x-protobuf").table.column("trace_id").to_pylist())
    return only
