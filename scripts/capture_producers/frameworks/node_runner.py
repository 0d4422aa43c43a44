"""Framework producers written in JavaScript: the agent is a Node script in `frameworks/node/<name>/`
(`agent.mjs`, with its `package.json` and `package-lock.json`, exact versions), run by `node` from the
producer's directory `$VENVS/node-<name>` — one directory holding both the harness's small Python
venv (protobuf, opentelemetry-proto: `requirements/<name>.txt`) and the script's `node_modules`
(`npm ci`, by run_frameworks.sh). The Node process exports its own spans to the capture's sink with
the JS SDK's real OTLP/HTTP exporters (protobuf and JSON) and writes the Collector file format with
the same SDK's JSON serializer, so capture_framework.py stores and cross-checks them as it does a
Python producer's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from frameworks import AGENT_NAME, SYSTEM_PROMPT, FrameworkRun

SOURCES = Path(__file__).resolve().parent / "node"


def node_dir() -> Path:
    """The producer's directory: the venv running this harness (`sys.prefix`)."""
    return Path(sys.prefix)


def npm_versions(name: str, packages: list[str]) -> dict[str, str]:
    """The installed versions of `packages` in the producer's node_modules (for expected.json)."""
    out = {}
    for package in packages:
        manifest = node_dir() / "node_modules" / package / "package.json"
        if manifest.exists():
            out[f"npm:{package}"] = json.loads(manifest.read_text())["version"]
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    out["node"] = node.stdout.strip()
    return out


def run_node(name: str, pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    """Run `frameworks/node/<name>/agent.mjs` once; its last stdout line is {final_text, error}."""
    script = node_dir() / f"{name}-agent.mjs"  # beside node_modules, so its imports resolve there
    shutil.copyfile(SOURCES / name / "agent.mjs", script)
    config = {
        "base_url": base_url,
        "sink_url": pipeline.sink_url,
        "jsonl_path": str(pipeline.workdir / "collector-traces.jsonl"),
        "service_name": pipeline.service_name,
        "agent_name": AGENT_NAME,
        "system": SYSTEM_PROMPT,
        "user": user_text,
        "streaming": streaming,
    }
    done = subprocess.run(
        ["node", str(script), json.dumps(config)], capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        return FrameworkRun(None, f"node exited {done.returncode}", done.stderr[-2000:])
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return FrameworkRun(result["final_text"], result["error"])
