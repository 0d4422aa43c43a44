"""Capture one producer playing the four-turn conversation (`conversation_script`).

    python capture_conversation.py PRODUCER VARIANT MODE OUTDIR     # VARIANT: confirmed | unconfirmed
                                                                    # MODE: plain | stream

Run inside the producer's venv (run_conversations.sh). Starts the conversation model server and
the OTLP sink on 127.0.0.1, plays the four turns with `conversation_agents.PRODUCERS[PRODUCER]`
and force-flushes the spans after every turn, so the fixture knows which traces each turn wrote.

Files: `collector-traces.jsonl` (the OTLP JSON-lines file exporter's output, one request per line;
the protobuf and OTLP/JSON HTTP copies are cross-checked as in capture.py and not kept: the
fixtures stay small), `model-requests.json` (every request body with the turn the server read),
`expected.json`: per turn the user's message, the calls the server **sent** in that turn (index,
id, name, arguments byte-for-byte), the trace ids first seen in that turn's flush and the agent's
final text; `truth` (the verdict the script deserves under the tests' policy).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from capture import _versions, write_otlp_files  # noqa: E402
from conversation_agents import PRODUCERS  # noqa: E402
from conversation_script import TRUTH, VARIANTS, ConversationModelServer  # noqa: E402
from otlp_sink import OTLPSink  # noqa: E402
from producers import COMMON_ENV, Pipeline  # noqa: E402


def _trace_ids(line: str) -> list[str]:
    request = json.loads(line)
    return [
        span["traceId"]
        for rs in request.get("resourceSpans", [])
        for ss in rs.get("scopeSpans", [])
        for span in ss.get("spans", [])
    ]


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    name, variant, mode, outdir = argv[1], argv[2], argv[3], Path(argv[4])
    producer = PRODUCERS[name]
    if variant not in VARIANTS or mode not in producer.modes:
        raise SystemExit(f"variant one of {sorted(VARIANTS)}, mode one of {producer.modes}")
    env = {**COMMON_ENV, **producer.env}
    os.environ.update(env)  # before any framework or instrumentation import
    users = [text for text, _ in VARIANTS[variant]]

    workdir = Path(tempfile.mkdtemp(prefix=f"conversation-{name}-{variant}-{mode}-"))
    jsonl = workdir / "collector-traces.jsonl"
    turns: list[dict[str, Any]] = []
    seen: set[str] = set()
    with OTLPSink() as sink, ConversationModelServer(variant) as model:
        pipeline = Pipeline(sink_url=sink.base_url, workdir=workdir, service_name=f"conversation-{name}")

        def end_turn(turn: int, final_text: str | None) -> None:
            pipeline.tracer_provider.force_flush()
            lines = jsonl.read_text().splitlines() if jsonl.exists() else []
            new = [t for line in lines if line for t in _trace_ids(line) if t not in seen]
            seen.update(new)
            turns.append({"turn": turn, "trace_ids": list(dict.fromkeys(new)), "final_text": final_text})

        producer.run(pipeline, model.base_url, users, mode == "stream", end_turn)
        pipeline.shutdown()
        captures = list(sink.captures)
        requests = list(model.requests)
        sent = dict(model.sent)

    if [t["turn"] for t in turns] != list(range(len(users))):
        raise AssertionError(f"{name}: the agent ended turns {[t['turn'] for t in turns]}")
    scratch = Path(tempfile.mkdtemp(prefix="conversation-otlp-"))
    manifest, notes = write_otlp_files(captures, scratch, workdir)  # cross-checks pb == json == jsonl
    outdir.mkdir(parents=True, exist_ok=True)
    for old in outdir.iterdir():
        old.unlink()
    shutil.copy(scratch / "collector-traces.jsonl", outdir / "collector-traces.jsonl")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(workdir, ignore_errors=True)
    (outdir / "model-requests.json").write_text(json.dumps(requests, indent=1, ensure_ascii=False) + "\n")
    for entry in turns:
        entry["user"] = users[entry["turn"]]
        entry["sent_calls"] = sent.get(entry["turn"], [])
    expected = {
        "producer": name,
        "framework": producer.framework,
        "description": producer.description,
        "package_versions": _versions(producer.packages),
        "python": platform.python_version(),
        "env": env,
        "service_name": f"conversation-{name}",
        "variant": variant,
        "mode": mode,
        "streamed": [bool(r["body"].get("stream")) for r in requests],
        "turns": turns,
        "truth": TRUTH[variant],
        "model_requests": len(requests),
        "otlp_requests": len(manifest),
        "capture_notes": notes + producer.notes,
    }
    (outdir / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    per_turn = [len(t["sent_calls"]) for t in turns]
    print(
        f"{name}/{variant}-{mode}: calls per turn {per_turn}; traces per turn {[len(t['trace_ids']) for t in turns]}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
