"""docs/sending-traces.md runs as written: its shell blocks in order, in one shell, from a
checkout's root, with its `# file:` Python blocks saved first. The producer snippets need packages
we do not install; they must at least be valid Python (they are the setups scripts/capture_producers
runs against the real packages)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb
from conftest import ROOT
from doc_pages import blocks as doc_blocks
from doc_pages import free_port, run_bash_blocks

DOC = ROOT / "docs" / "sending-traces.md"


def blocks(lang: str) -> list[str]:
    return doc_blocks(DOC, lang)


def test_every_python_snippet_is_valid_python() -> None:
    snippets = blocks("python")
    assert len(snippets) >= 5
    for snippet in snippets:
        compile(snippet, "sending-traces.md", "exec")


def test_every_javascript_snippet_is_valid_javascript(tmp_path: Path) -> None:
    """The JavaScript producers' snippets (Vercel AI SDK, …) parse as ES modules (`node --check`)."""
    snippets = blocks("javascript")
    assert snippets
    for n, snippet in enumerate(snippets):
        path = tmp_path / f"snippet{n}.mjs"
        path.write_text(snippet)
        done = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr


def test_the_page_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    # the page's port, 4318, may be taken on a test machine: the same commands on a free port
    port = free_port()
    for snippet in blocks("python"):
        first = snippet.splitlines()[0]
        if first.startswith("# file: "):
            (tmp_path / first.removeprefix("# file: ").strip()).write_text(snippet.replace("4318", port))
    done = run_bash_blocks(DOC, tmp_path, ("4318", port))
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
