"""docs/sending-traces.md runs as written: its shell blocks in order, in one shell, from a
checkout's root, with its `# file:` Python blocks saved first. The producer snippets need packages
we do not install; they must at least be valid Python (they are the setups scripts/capture_producers
runs against the real packages)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
from conftest import ROOT

DOC = ROOT / "docs" / "sending-traces.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_every_python_snippet_is_valid_python() -> None:
    snippets = blocks("python")
    assert len(snippets) >= 5
    for snippet in snippets:
        compile(snippet, "sending-traces.md", "exec")


def test_the_page_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    # the page's port, 4318, may be taken on a test machine: the same commands on a free port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    for snippet in blocks("python"):
        first = snippet.splitlines()[0]
        if first.startswith("# file: "):
            (tmp_path / first.removeprefix("# file: ").strip()).write_text(snippet.replace("4318", port))
    # if a command fails, stop the background receiver too, or its open pipes would hang the run
    script = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(
        blocks("bash")
    ).replace("4318", port)
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.Popen(
        ["bash", "-c", script], cwd=tmp_path, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        stdout, stderr = proc.communicate(timeout=300)
    finally:  # a hang must not leave the receiver behind
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert done.returncode == 0, done.stderr
    assert f"listening on http://127.0.0.1:{port}" in done.stderr
    assert "stopped" in done.stderr  # `kill %1` stopped serve cleanly
    con = duckdb.connect(str(tmp_path / "traces.duckdb"), read_only=True)
    try:
        calls = con.execute(
            "SELECT tool_name, source FROM tool_calls JOIN (SELECT DISTINCT trace_id, source FROM spans) USING (trace_id) ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()
    # my_agent.py through serve, the three producer files through ingest
    assert ("get_weather", "otlp") in calls
    assert {source for _, source in calls} == {"otlp", "file"}
    assert "tool_name" in done.stdout and "has_schema" in done.stdout
