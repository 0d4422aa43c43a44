"""Capture one scenario of one agent *framework* (the framework runs its own loop).

    python capture_framework.py FRAMEWORK SCENARIO MODE OUTDIR      # MODE: plain | stream

Must run inside the framework's own venv (run_frameworks.sh). Like capture.py it starts the
scripted model server and the OTLP sink in-process on 127.0.0.1, but the agent loop is the
framework's: `frameworks/<module>.py` builds the framework's agent with the three tools of
`agent.py` (get_weather, get_time, book_table), points its model client at the scripted server,
turns its instrumentation on, and runs the scenario's user text once.

The ground truth is what the scripted server **sent**, not what the framework did with it:
`expected.json` has `sent_calls` (every tool call of every response actually served: turn,
index, id, name, arguments byte-for-byte), `sent_final_text`, and the tool definitions the
framework sent in its first request (`request_tools`, exactly as on the wire). A framework
that stops early (it refuses invalid JSON, say) is an outcome, recorded in `outcome`; the calls
the server had sent until then are still the truth. Files: as capture.py (README.md).
"""

from __future__ import annotations

import json
import platform
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from capture import _versions, clear_fixture_dir, write_otlp_files  # noqa: E402
from frameworks import FRAMEWORKS, FrameworkRun  # noqa: E402
from model_server import RESPONSE_MODEL, SCRIPTS, ScriptedModelServer  # noqa: E402
from otlp_sink import OTLPSink  # noqa: E402
from producers import Pipeline, apply_env  # noqa: E402

MODES = ("plain", "stream")


def sent_calls(responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every tool call the server sent, in order (ids absent when the script omitted them)."""
    out = []
    for turn, payload in enumerate(responses, start=1):
        message = payload["choices"][0]["message"]
        for index, call in enumerate(message.get("tool_calls") or []):
            out.append(
                {
                    "turn": turn,
                    "index": index,
                    "id": call.get("id"),
                    "name": call["function"]["name"],
                    "arguments_raw": call["function"]["arguments"],
                }
            )
    return out


def sent_final_text(responses: list[dict[str, Any]]) -> str | None:
    if not responses:
        return None
    message = responses[-1]["choices"][0]["message"]
    return None if message.get("tool_calls") else message.get("content")


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    name, scenario, mode, outdir = argv[1], argv[2], argv[3], Path(argv[4])
    config = FRAMEWORKS[name]
    if scenario not in SCRIPTS:
        raise SystemExit(f"unknown scenario {scenario!r}")
    if mode not in MODES:
        raise SystemExit(f"unknown mode {mode!r}; one of {MODES}")
    env = apply_env(config)  # before any framework or instrumentation import

    workdir = Path(tempfile.mkdtemp(prefix=f"capture-{name}-{scenario}-{mode}-"))
    service_name = f"traceladder-fixture-{name}"
    with OTLPSink() as sink, ScriptedModelServer(scenario) as model:
        pipeline = Pipeline(sink_url=sink.base_url, workdir=workdir, service_name=service_name)
        try:
            run = config.run(pipeline, model.base_url, SCRIPTS[scenario]["user"], mode == "stream")
        except Exception as exc:  # the framework gave up: an outcome, the spans still count
            run = FrameworkRun(None, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=3))
        pipeline.shutdown()
        captures = list(sink.captures)
        model_requests = list(model.requests)
        responses = list(model.responses)

    clear_fixture_dir(outdir)
    manifest, notes = write_otlp_files(captures, outdir, workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    if not manifest:
        raise AssertionError(f"{name}/{scenario}/{mode}: no OTLP request arrived")
    (outdir / "model-requests.json").write_text(
        json.dumps([r["body"] for r in model_requests], indent=1, ensure_ascii=False) + "\n"
    )
    first = model_requests[0]["body"] if model_requests else {}
    expected = {
        "producer": name,
        "framework": config.framework,
        "description": config.description,
        "package_versions": _versions(config.packages) | (config.versions() if config.versions else {}),
        "python": platform.python_version(),
        "env": env,
        "service_name": service_name,
        "scenario": scenario,
        "mode": mode,
        # a body flag, or the path (Bedrock's converse-stream)
        "streamed": [bool(r["body"].get("stream")) or r["path"].rstrip("/").endswith("-stream") for r in model_requests],
        "response_model": RESPONSE_MODEL,
        "user_text": SCRIPTS[scenario]["user"],
        "request_tools": first.get("tools") or (first.get("toolConfig") or {}).get("tools"),  # Converse: toolConfig
        "sent_calls": sent_calls(responses),
        "sent_final_text": sent_final_text(responses),
        "model_turns": len(model_requests),
        "outcome": {"final_text": run.final_text, "error": run.error},
        "otlp_requests": sorted(manifest, key=lambda m: m["seq"]),
        "capture_notes": notes + list(config.notes),
    }
    (outdir / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    outcome = "final text" if run.final_text is not None else f"stopped: {run.error}"
    print(f"{name}/{scenario}/{mode}: {len(expected['sent_calls'])} calls sent; {outcome}; " + "; ".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
