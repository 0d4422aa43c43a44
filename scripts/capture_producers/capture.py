"""Capture one scenario under one producer config and write the fixture files.

    python capture.py PRODUCER SCENARIO OUTDIR

Must run inside the producer's own venv (see run_all.sh). Starts the scripted model
server and the OTLP sink in-process (threads on 127.0.0.1, ephemeral ports), runs the
agent loop on the real ``openai`` client under the producer's instrumentation, flushes,
then writes into OUTDIR (old fixture files there are removed first):

  traces-NNN.pb / logs-NNN.pb      raw OTLP/HTTP protobuf bodies, arrival order (decompressed)
  traces.json / logs.json          OTLP/JSON requests as a JSON array (real JSON exporter)
  collector-traces.jsonl / -logs   one OTLP/JSON request per line (real JSON-lines file exporter)
  model-requests.json              every chat-completions request body the model server got
  expected.json                    ground truth: tools sent, calls as scripted, results, final text,
                                   versions, env, and a manifest of the OTLP requests received
"""

from __future__ import annotations

import contextlib
import json
import platform
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from model_server import RESPONSE_MODEL, SCRIPTS, ScriptedModelServer  # noqa: E402
from otlp_sink import OTLPSink  # noqa: E402
from producers import PRODUCERS, Pipeline, apply_env  # noqa: E402

FIXTURE_GLOBS = ("traces-*.pb", "logs-*.pb", "*.json", "*.jsonl")


def _versions(packages: list[str]) -> dict[str, str]:
    out = {}
    for name in packages:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    out["protobuf"] = metadata.version("protobuf")
    return dict(sorted(out.items()))


def _expected_calls(scenario: str, executed: list[Any]) -> list[dict[str, Any]]:
    """Calls as the model server sent them (script), joined with what the agent returned."""
    scripted = []
    for turn_no, turn in enumerate(SCRIPTS[scenario]["turns"], start=1):
        for index, tc in enumerate(turn.get("tool_calls", [])):
            scripted.append((turn_no, index, tc))
    if len(scripted) != len(executed):
        raise AssertionError(f"agent executed {len(executed)} calls, script has {len(scripted)}")
    calls = []
    for (turn_no, index, tc), ex in zip(scripted, executed, strict=True):
        got = (ex.call.turn, ex.call.index, ex.call.id, ex.call.name, ex.call.arguments_raw)
        want = (turn_no, index, tc["id"], tc["name"], tc["arguments"])
        if got != want:
            raise AssertionError(f"agent saw {got!r}, script sent {want!r}")
        calls.append(
            {
                "turn": turn_no,
                "index": index,
                "id": tc["id"],
                "name": tc["name"],
                "arguments_raw": tc["arguments"],
                "result": ex.result,
                "error": ex.error,
            }
        )
    return calls


def _check_model_requests(scenario: str, requests: list[dict[str, Any]], calls: list[dict[str, Any]]) -> None:
    """Every tool call and result went back to the model verbatim on the next turn."""
    n_turns = len(SCRIPTS[scenario]["turns"])
    if len(requests) != n_turns:
        raise AssertionError(f"model server got {len(requests)} requests, script has {n_turns} turns")
    last = requests[-1]["body"]["messages"]
    sent = [
        (tc.get("id"), tc["function"]["name"], tc["function"]["arguments"])
        for m in last
        if m["role"] == "assistant"
        for tc in m.get("tool_calls") or []
    ]
    want = [(c["id"], c["name"], c["arguments_raw"]) for c in calls]
    if sent != want:
        raise AssertionError(f"tool calls fed back {sent!r} != scripted {want!r}")
    results = [m["content"] for m in last if m["role"] == "tool"]
    if results != [c["result"] for c in calls]:
        raise AssertionError("tool results fed back differ from what the agent recorded")


def _manifest_entry(cap: Any, stored_as: str) -> dict[str, Any]:
    return {
        "seq": cap.seq,
        "path": cap.path,
        "content_type": cap.content_type,
        "content_encoding": cap.content_encoding or None,
        "bytes": len(cap.body),
        "stored_as": stored_as,
    }


def _cross_check_json(kind: str, pb_bodies: list[bytes], json_bodies: list[Any]) -> str:
    """The real OTLP/JSON exporter's requests must equal the protobuf requests converted
    with json_format.MessageToDict + base64->hex ids (same spans, same batches)."""
    from otlp_json import pb_to_otlp_json, same_message

    if len(pb_bodies) != len(json_bodies):
        raise AssertionError(
            f"{kind}: {len(pb_bodies)} protobuf requests vs {len(json_bodies)} JSON requests"
        )
    spelled = 0  # equal as messages, not as MessageToDict's dicts (the JS serializer's spelling)
    for i, (pb, js) in enumerate(zip(pb_bodies, json_bodies, strict=True), start=1):
        if pb_to_otlp_json(kind, pb) != js:
            if not same_message(kind, pb, js):
                raise AssertionError(
                    f"{kind} request {i}: JSON exporter output differs from the protobuf body"
                )
            spelled += 1
    if spelled:
        return (
            f"{kind}: {len(pb_bodies)} request(s); JSON exporter output == protobuf as messages (ParseDict)"
        )
    return f"{kind}: {len(pb_bodies)} request(s); JSON exporter output == protobuf via MessageToDict+hex ids"


def clear_fixture_dir(outdir: Path) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    for pattern in FIXTURE_GLOBS:
        for old in outdir.glob(pattern):
            old.unlink()


def write_otlp_files(captures: list[Any], outdir: Path, workdir: Path) -> tuple[list[Any], list[str]]:
    """Writes every OTLP request the sink received (protobuf bodies, the JSON exporter's requests,
    the JSON-lines file) into `outdir`, cross-checked; returns (manifest, notes)."""
    notes = []
    manifest = []  # every OTLP/HTTP request the sink received, in arrival order
    unexpected = sorted(
        {c.path for c in captures} - {"/v1/traces", "/v1/logs", "/json/v1/traces", "/json/v1/logs"}
    )
    if unexpected:
        raise AssertionError(f"unexpected OTLP paths {unexpected}")
    for kind in ("traces", "logs"):
        pb_caps = [c for c in captures if c.path == f"/v1/{kind}"]
        js_caps = [c for c in captures if c.path == f"/json/v1/{kind}"]
        pb_bodies = []
        for n, cap in enumerate(pb_caps, start=1):
            if not cap.content_type.startswith("application/x-protobuf"):
                raise AssertionError(f"{cap.path}: Content-Type {cap.content_type!r}")
            if cap.content_encoding:
                notes.append(
                    f"{kind}-{n:03d}.pb came with Content-Encoding {cap.content_encoding}; stored decoded"
                )
            body = cap.decoded()
            pb_bodies.append(body)
            (outdir / f"{kind}-{n:03d}.pb").write_bytes(body)
            manifest.append(_manifest_entry(cap, f"{kind}-{n:03d}.pb"))
        json_bodies = []
        for cap in js_caps:
            if not cap.content_type.startswith("application/json"):
                raise AssertionError(f"{cap.path}: Content-Type {cap.content_type!r}")
            json_bodies.append(json.loads(cap.decoded()))
            manifest.append(_manifest_entry(cap, f"{kind}.json[{len(json_bodies) - 1}]"))
        if pb_bodies or json_bodies:
            notes.append(_cross_check_json(kind, pb_bodies, json_bodies))
            (outdir / f"{kind}.json").write_text(json.dumps(json_bodies, indent=1, ensure_ascii=False) + "\n")
            jsonl = workdir / f"collector-{kind}.jsonl"
            lines = jsonl.read_text().rstrip("\n").split("\n") if jsonl.exists() else []  # "\n" only
            if len(lines) != len(json_bodies) or [json.loads(x) for x in lines] != json_bodies:
                raise AssertionError(f"collector-{kind}.jsonl differs from the JSON requests")
            shutil.copyfile(jsonl, outdir / f"collector-{kind}.jsonl")
    return manifest, notes


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    producer, scenario, outdir = argv[1], argv[2], Path(argv[3])
    config = PRODUCERS[producer]
    if scenario not in SCRIPTS:
        raise SystemExit(f"unknown scenario {scenario!r}")
    env = apply_env(config)  # before any instrumentation or openai import

    import openai
    from agent import SYSTEM_PROMPT, TOOLS, run_agent

    workdir = Path(tempfile.mkdtemp(prefix=f"capture-{producer}-{scenario}-"))
    service_name = f"traceladder-fixture-{producer}"
    with OTLPSink() as sink, ScriptedModelServer(scenario) as model:
        pipeline = Pipeline(sink_url=sink.base_url, workdir=workdir, service_name=service_name)
        telemetry = config.setup(pipeline)
        client = openai.OpenAI(base_url=model.base_url, api_key="sk-fixture-not-a-key", max_retries=0)
        result = run_agent(client, SCRIPTS[scenario]["user"], telemetry)
        pipeline.shutdown()
        captures = list(sink.captures)
        model_requests = list(model.requests)

    calls = _expected_calls(scenario, result.calls)
    _check_model_requests(scenario, model_requests, calls)
    final_text = SCRIPTS[scenario]["turns"][-1]["content"]
    if result.final_text != final_text:
        raise AssertionError(f"final text {result.final_text!r} != scripted {final_text!r}")

    clear_fixture_dir(outdir)
    manifest, notes = write_otlp_files(captures, outdir, workdir)
    shutil.rmtree(workdir, ignore_errors=True)

    (outdir / "model-requests.json").write_text(
        json.dumps([r["body"] for r in model_requests], indent=1, ensure_ascii=False) + "\n"
    )
    expected = {
        "producer": producer,
        "description": config.description,
        "package_versions": _versions(config.packages),
        "python": platform.python_version(),
        "env": env,
        "service_name": service_name,
        "scenario": scenario,
        "request_model": "gpt-4o-mini",
        "response_model": RESPONSE_MODEL,
        "system_prompt": SYSTEM_PROMPT,
        "user_text": SCRIPTS[scenario]["user"],
        "tool_definitions": TOOLS,
        "calls": calls,
        "final_text": final_text,
        "model_turns": len(model_requests),
        "otlp_requests": sorted(manifest, key=lambda m: m["seq"]),
        "capture_notes": notes,
    }
    (outdir / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    print(f"{producer}/{scenario}: " + "; ".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
