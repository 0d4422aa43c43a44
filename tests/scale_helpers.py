"""Shared data for the scale tests (issue 15): one store per test session holding a 72-case
simulated suite run (a copy of the session's `faulty_suite`) and the real producer captures (OTel
GenAI, OpenInference, OpenLLMetry), its results from the ordinary in-store `evaluate`, and a
Parquet export of it.

Built once per session, not per pytest worker (tests/shared_suites.py), by the commands run in
process: they are the set-up, not the subject (the tests' own `evaluate` calls stay real
processes, and so does `export`, whose output the tests read). The tests only read it (a test that writes copies the store first); the `scale_data`
fixture (tests/conftest.py) checks at the end of the session that no file of it changed."""

from __future__ import annotations

import glob
import hashlib
import shutil
from pathlib import Path

import duckdb
from conftest import ROOT, cli, cli_in_process
from shared_suites import built_once, session_folder

from traceladder.receive.span_sources.shard import shard_of

_HELP: dict[str, str] = {}

# The result columns that depend on when and where a trace was judged, not on what was judged.
_VOLATILE = {"trace_results": "evaluated_at, judged_seq", "rung_results": "", "findings": ""}


def dataset(tmp_path_factory, default_run: Path) -> tuple[Path, str]:
    """The directory holding `store.duckdb` (spans + in-store results) and `export/` (4 shards),
    and the digest of every file in it as built. `default_run` is the session's shared store of
    the default 72-case run (`faulty_suite`): the dataset starts as a copy of it instead of
    running the same 72 cases again."""
    root = session_folder(tmp_path_factory) / "scale-dataset"
    db = root / "store.duckdb"

    def build() -> dict[str, str]:
        shutil.copy(default_run, db)
        captures = sorted(glob.glob(str(ROOT / "tests/fixtures/producers/*/*/traces-*.pb")))
        assert len(captures) >= 12
        done = cli_in_process("ingest", "--db", str(db), *captures)
        assert done.returncode == 0, done.stderr
        done = cli_in_process("evaluate", "--db", str(db), *no_judge())
        assert done.returncode == 0, done.stderr
        # a real process: the export the tests read is the command line's (its only real-CLI call)
        done = cli("export", "--db", str(db), "--out", str(root / "export"), "--shards", "4")
        assert done.returncode == 0, done.stderr
        return {"sha256": files_digest(root)}

    return root, built_once(root, build)["sha256"]


def files_digest(root: Path) -> str:
    """One SHA-256 over the dataset's files (names and contents; not the build's lock files)."""
    digest = hashlib.sha256()
    built = [p for p in root.rglob("*") if p.is_file() and (p.parent != root or p.name == "store.duckdb")]
    for path in sorted(built):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def no_judge() -> list[str]:
    """`--no-judge` where `evaluate` has rung 5 (an LLM judge, on by default for simulated runs):
    the code-rung references are judged without it (rung 5 sharded: tests/scale/test_scale_judge.py)."""
    if "help" not in _HELP:
        _HELP["help"] = cli_in_process("evaluate", "--help").stdout
    return ["--no-judge"] if "--no-judge" in _HELP["help"] else []


# The agent traces of the store: a store may also hold the LLM judge's own spans (source
# `judge`), which are never judged and which the Collector would not have written to ClickHouse.
AGENT_SPANS = "SELECT * FROM spans WHERE source IS DISTINCT FROM 'judge'"


def counts(db: Path) -> tuple[int, int]:
    """(spans, traces) of the store's agent spans."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute(f"SELECT count(*), count(DISTINCT trace_id) FROM ({AGENT_SPANS})").fetchone()
        assert row is not None
        return int(row[0]), int(row[1])
    finally:
        con.close()


def results(db: Path) -> dict[str, list[tuple]]:
    """Every result row of the store, sorted, without the when/where columns."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for table, volatile in _VOLATILE.items():
            exclude = f" EXCLUDE ({volatile})" if volatile else ""
            out[table] = con.execute(f"SELECT *{exclude} FROM {table} ORDER BY ALL").fetchall()
        return out
    finally:
        con.close()


def assert_same_results(db: Path, reference: Path) -> None:
    got, want = results(db), results(reference)
    assert len(want["trace_results"]) == 90  # 72 suite traces + 18 captured ones
    for table in want:
        assert got[table] == want[table], table


def trace_shards(db: Path, shards: int) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        ids = [r[0] for r in con.execute(f"SELECT DISTINCT trace_id FROM ({AGENT_SPANS})").fetchall()]
    finally:
        con.close()
    return {t: shard_of(t, shards) for t in ids}
