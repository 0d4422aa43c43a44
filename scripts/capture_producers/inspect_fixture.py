"""Print what a captured fixture contains, decoded with the official opentelemetry-proto classes.

    python inspect_fixture.py DIR [-v]

DIR is one ``tests/fixtures/producers/<producer>/<scenario>/`` directory. For every
``traces-NNN.pb`` it prints each span (name, kind, trace/span/parent ids, status,
scope, attribute keys, event names); for every ``logs-NNN.pb`` each log record
(event name, ids, attribute keys, body). With ``-v`` attribute values are printed too
(long values are shortened). Needs only ``opentelemetry-proto`` (any producer venv).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

KINDS = {v: k.removeprefix("SPAN_KIND_") for k, v in Span.SpanKind.items()}
STATUS = {v: k.removeprefix("STATUS_CODE_") for k, v in Status.StatusCode.items()}


def anyvalue(v: Any) -> Any:
    which = v.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [anyvalue(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: anyvalue(kv.value) for kv in v.kvlist_value.values}
    if which == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, which)


def short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def print_attrs(attrs: Any, verbose: bool, indent: str) -> None:
    if not verbose:
        keys = [kv.key for kv in attrs]
        if keys:
            print(f"{indent}attrs: {', '.join(keys)}")
        return
    for kv in attrs:
        value = anyvalue(kv.value)
        kind = kv.value.WhichOneof("value")
        print(f"{indent}{kv.key} [{kind}] = {short(value)}")


def resource_line(resource: Any) -> str:
    attrs = {kv.key: anyvalue(kv.value) for kv in resource.attributes}
    return f"service.name={attrs.get('service.name')} service.version={attrs.get('service.version')}"


def show_traces(path: Path, verbose: bool) -> None:
    req = ExportTraceServiceRequest()
    req.ParseFromString(path.read_bytes())
    print(f"== {path.name}")
    for rs in req.resource_spans:
        print(f"resource: {resource_line(rs.resource)}")
        for ss in rs.scope_spans:
            print(f" scope: {ss.scope.name} {ss.scope.version} schema={ss.schema_url or '-'}")
            for span in ss.spans:
                parent = span.parent_span_id.hex() or "-"
                status = STATUS[span.status.code] + (
                    f" ({span.status.message})" if span.status.message else ""
                )
                print(
                    f"  span {span.name!r} kind={KINDS[span.kind]} trace={span.trace_id.hex()[:8]}… "
                    f"span={span.span_id.hex()} parent={parent} status={status}"
                )
                print_attrs(span.attributes, verbose, "    ")
                for ev in span.events:
                    print(f"    event {ev.name!r}")
                    print_attrs(ev.attributes, verbose, "      ")


def show_logs(path: Path, verbose: bool) -> None:
    req = ExportLogsServiceRequest()
    req.ParseFromString(path.read_bytes())
    print(f"== {path.name}")
    for rl in req.resource_logs:
        print(f"resource: {resource_line(rl.resource)}")
        for sl in rl.scope_logs:
            print(f" scope: {sl.scope.name} {sl.scope.version} schema={sl.schema_url or '-'}")
            for rec in sl.log_records:
                print(
                    f"  log event_name={rec.event_name!r} trace={rec.trace_id.hex()[:8]}… "
                    f"span={rec.span_id.hex() or '-'} severity={rec.severity_number}"
                )
                print_attrs(rec.attributes, verbose, "    ")
                body = anyvalue(rec.body)
                if body is not None:
                    print(f"    body = {short(body, 400 if verbose else 160)}")


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if a != "-v"]
    verbose = "-v" in argv[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(args[0])
    expected = folder / "expected.json"
    if expected.exists():
        exp = json.loads(expected.read_text())
        versions = ", ".join(f"{k}=={v}" for k, v in exp["package_versions"].items())
        print(f"# {exp['producer']} / {exp['scenario']}  ({versions})")
        for c in exp.get("calls", exp.get("sent_calls", [])):  # sent_calls: framework fixtures
            turn = f"{c['turn']}.{c['index']}"
            print(f"#   turn {turn} {c['id']} {c['name']} {c['arguments_raw']} error={c.get('error')}")
    for pb in sorted(folder.glob("traces-*.pb")):
        show_traces(pb, verbose)
    for pb in sorted(folder.glob("logs-*.pb")):
        show_logs(pb, verbose)
    _ = json_format  # the JSON side is in traces.json / logs.json
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
