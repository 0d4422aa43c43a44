"""Shared data for the scale tests (issue 15): one store per test process holding a 72-case
simulated suite run and the real producer captures (OTel GenAI, OpenInference, OpenLLMetry), its
results from the ordinary in-store `evaluate`, and a Parquet export of it."""

from __future__ import annotations

import glob
from pathlib import Path

import duckdb
from conftest import ROOT, cli

from traceladder.receive.span_sources.shard import shard_of

_BUILT: dict[str, Path] = {}
_HELP: dict[str, str] = {}

# The result columns that depend on when and where a trace was judged, not on what was judged.
_VOLATILE = {"trace_results": "evaluated_at, judged_seq", "rung_results": "", "findings": ""}


def dataset(tmp_path_factory) -> Path:
    """The directory holding `store.duckdb` (spans + in-store results) and `export/` (4 shards)."""
    if "dir" in _BUILT:
        return _BUILT["dir"]
    root = tmp_path_factory.mktemp("scale")
    db = root / "store.duckdb"
    done = cli("run", "--db", str(db))
    assert done.returncode == 0, done.stderr
    captures = sorted(glob.glob(str(ROOT / "tests/fixtures/producers/*/*/traces-*.pb")))
    assert len(captures) >= 12
    done = cli("ingest", "--db", str(db), *captures)
    assert done.returncode == 0, done.stderr
    done = cli("evaluate", "--db", str(db), *no_judge())
    assert done.returncode == 0, done.stderr
    done = cli("export", "--db", str(db), "--out", str(root / "export"), "--shards", "4")
    assert done.returncode == 0, done.stderr
    _BUILT["dir"] = root
    return root


def no_judge() -> list[str]:
    """`--no-judge` where `evaluate` has rung 5 (an LLM judge, on by default for simulated runs):
    the code-rung references are judged without it (rung 5 sharded: tests/scale/test_scale_judge.py)."""
    if "help" not in _HELP:
        _HELP["help"] = cli("evaluate", "--help").stdout
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
