"""OTLP/JSON requests of traces tagged with retail case ids, as a live agent would send them:
one trace per case, its root carrying `traceladder.case.id`, one execute_tool span with the call
the agent made (`runs add --where …` turns them into a run)."""

from __future__ import annotations

import json

CASES = [f"fc-d1-{n:03d}" for n in range(1, 13)]  # read-only lookups: get_order, get_user, …


def _attr(key: str, value: object) -> dict:
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: str(value) if kind == "stringValue" else value}}


def _golden() -> dict[str, tuple[str, dict]]:
    from traceladder.suite.cases import load_cases
    from traceladder.suite.domain.registry import load_domain

    return {
        c.id: (c.calls[0].tool, c.calls[0].params) for c in load_cases(load_domain("retail")) if c.id in CASES
    }


def _traces(version: str, broken: set[str], seq: int) -> dict:
    """One OTLP/JSON request: a trace per case, its root tagged with the case id, one
    execute_tool span with the call the agent made (the golden one, or a wrong id)."""
    spans = []
    for n, (case_id, (tool, params)) in enumerate(sorted(_golden().items())):
        trace_id = f"{seq:08x}{n:024x}"
        root, child = f"{seq:04x}{n:011x}1", f"{seq:04x}{n:011x}2"
        arguments = dict(params)
        if case_id in broken:
            arguments = {k: "X999" for k in arguments}
        start = 1_780_000_000_000_000_000 + seq * 10**12 + n * 10**9
        spans.append({
            "traceId": trace_id, "spanId": root, "name": "invoke_agent shop", "kind": 1,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5000),
            "attributes": [_attr("gen_ai.operation.name", "invoke_agent"), _attr("traceladder.case.id", case_id)],
        })  # fmt: skip
        spans.append({
            "traceId": trace_id, "spanId": child, "parentSpanId": root, "name": f"execute_tool {tool}", "kind": 1,
            "startTimeUnixNano": str(start + 1000), "endTimeUnixNano": str(start + 2000),
            "attributes": [
                _attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", tool),
                _attr("gen_ai.tool.call.id", "call_1"), _attr("gen_ai.tool.call.arguments", json.dumps(arguments)),
                _attr("gen_ai.tool.call.result", '{"ok": true}'),
            ],
        })  # fmt: skip
    resource = {"attributes": [_attr("service.name", "shop-agent"), _attr("service.version", version)]}
    return {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "shop"}, "spans": spans}]}]
    }
