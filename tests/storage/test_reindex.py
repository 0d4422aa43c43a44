"""`traceladder reindex`: a store written by a past release of this repository reaches today's
extraction with one command, and then equals a fresh ingest of the same spans row by row (issue
30, point 3). The past release is built in the test: the package as it was just before the
extraction stage existed (`git archive` of that commit), run from its own directory.

Also: a store of an older extraction says so once, on a read-only command that changes nothing
in the file; an interrupted rebuild resumes where it stopped; `--conventions` records the store's
setting and `TRACELADDER_CONVENTIONS` no longer changes what a write reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT, cli, cli_in_process
from tests.otlp_helpers import TID, req_json, span_json
from traceladder.extract.version import EXTRACTION_VERSION
from traceladder.workflows.reindex import reindex

FIXTURES = ROOT / "tests" / "fixtures"
FILES = sorted(str(p) for p in FIXTURES.glob("*/*/*/collector-*.jsonl"))
TOY = str(ROOT / "tests" / "plugins" / "toy_convention")
NOTICE = "run `traceladder reindex`"

# Derived rows compared between the rebuilt store and a fresh one: every column, in a fixed order
# (the trace index without its arrival times and sequence, which say when, not what).
COMPARED = {
    "tool_calls": ("SELECT * FROM tool_calls ORDER BY trace_id, ordinal", ()),
    "tool_definitions": ("SELECT * FROM tool_definitions ORDER BY trace_id, name, span_id", ()),
    "spans": (
        "SELECT trace_id, span_id, operation, tool_name, tool_call_id, tool_arguments, tool_result, "
        "error_type, convention, role FROM spans ORDER BY trace_id, span_id",
        (),
    ),
    "traces": ("SELECT * EXCLUDE (first_seen, last_seen, seq) FROM traces ORDER BY trace_id", ()),
}


def _git(*args: str) -> bytes:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True).stdout


@pytest.fixture(scope="module")
def past_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package as the commit before the extraction stage left it, in a directory of its own."""
    added = _git("log", "--diff-filter=A", "--format=%H", "--", "traceladder/extraction/stage.py").split()
    assert added, "the commit that added the extraction stage is not in this checkout's history"
    where = tmp_path_factory.mktemp("past")
    archive = _git("archive", "--format=tar", f"{added[-1].decode()}^", "traceladder")
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(where, filter="data")
    assert not (where / "traceladder" / "extraction").exists()
    assert (where / "traceladder" / "storage" / "set_fold.py").exists()  # the SQL twin it shipped
    return where


def _past_cli(release: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(release)}
    return subprocess.run(
        [sys.executable, "-m", "traceladder", *args], cwd=release, env=env, capture_output=True, text=True
    )


def _rows(db: Path) -> dict[str, list[list[object]]]:
    out = {}
    for name, (sql, _) in COMPARED.items():
        r = cli_in_process("sql", "--db", str(db), sql, "--json")
        assert r.returncode == 0, r.stderr
        out[name] = [list(row.values()) for row in json.loads(r.stdout)]
    return out


def _lines(path: str) -> bytes:
    """A Collector JSON lines file's requests, each ending its line."""
    data = Path(path).read_bytes()
    return data if data.endswith(b"\n") else data + b"\n"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_store_of_a_past_release_is_reindexed_to_equal_a_fresh_ingest(
    past_release: Path, tmp_path: Path
) -> None:
    old, fresh = tmp_path / "old.duckdb", tmp_path / "fresh.duckdb"
    # The past release ingests the fixtures' requests as one file of Collector JSON lines: it paid
    # ~70 ms a file (18 CPU-s for the 252 files, 1.2 for their lines in one), and stored the same
    # rows either way (compared table by table: only the ingest times differ). Today's ingest
    # below reads the 252 files, as before.
    lines = tmp_path / "collector-all.jsonl"
    lines.write_bytes(b"".join(_lines(path) for path in FILES))
    written = _past_cli(past_release, "ingest", "--db", str(old), str(lines))
    assert written.returncode == 0, written.stderr
    requests = lines.read_bytes().count(b"\n")
    assert f" requests={requests} " in written.stdout and "problems=0" in written.stdout, written.stdout
    # a read-only command says once, in one line, that an older traceladder wrote the store (its
    # schema, and so its rows: decision 591) and which command upgrades it; it writes nothing
    before = _digest(old)
    r = cli("sql", "--db", str(old), "SELECT count(*) AS n FROM tool_calls", "--json")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("\n") == 1 and "was written by an older traceladder" in r.stderr, r.stderr
    assert f"run `traceladder reindex --db {old}`" in r.stderr
    calls = json.loads(r.stdout)[0]["n"]
    assert calls > 200
    assert _digest(old) == before

    r = cli("reindex", "--db", str(old))
    assert r.returncode == 0, r.stderr
    assert NOTICE not in r.stderr
    assert r.stdout.startswith("reindexed traces=")
    assert (
        cli_in_process("ingest", "--db", str(fresh), "--processes", "1", *FILES).returncode == 0
    )  # set-up in one process: decision 801

    rebuilt, expected = _rows(old), _rows(fresh)
    for name in COMPARED:
        assert len(rebuilt[name]) == len(expected[name]) > 0, name
        differ = [(a, b) for a, b in zip(rebuilt[name], expected[name], strict=True) if a != b]
        assert differ == [], (name, differ[:3])
    # today's extraction reads other calls than the past release's (the readers grew, history
    # copies merge by id): what counts is that the rebuilt rows equal a fresh ingest's (above)
    assert len(rebuilt["tool_calls"]) > 200 and calls > 200
    # stamped, and nothing more to say
    r = cli("sql", "--db", str(old), "SELECT DISTINCT extraction, conventions FROM tool_calls", "--json")
    assert (r.returncode, r.stderr) == (0, "")
    assert json.loads(r.stdout) == [{"extraction": EXTRACTION_VERSION, "conventions": "builtin"}]
    again = cli("reindex", "--db", str(old))
    assert again.stdout.startswith("reindexed traces=0 ")


@pytest.fixture(scope="module")
def twelve(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh ingest of the first 12 fixture files, made once: each test that changes a store
    works on a copy, and another copy is the fresh ingest it must come back to (the same rows an
    ingest of its own would write; ~1.7 CPU-s an ingest, four of them before)."""
    db = tmp_path_factory.mktemp("twelve") / "s.duckdb"
    assert (
        cli_in_process("ingest", "--db", str(db), "--processes", "1", *FILES[:12]).returncode == 0
    )  # set-up in one process: decision 801
    assert not db.with_name("s.duckdb.wal").exists()  # the whole store is the one file copied
    return db


def _copies(store: Path, tmp_path: Path) -> tuple[Path, Path]:
    db, fresh = tmp_path / "s.duckdb", tmp_path / "fresh.duckdb"
    shutil.copyfile(store, db)
    shutil.copyfile(store, fresh)
    return db, fresh


def test_an_interrupted_reindex_resumes_where_it_stopped(twelve: Path, tmp_path: Path) -> None:
    db, fresh = _copies(twelve, tmp_path)
    with duckdb.connect(str(db)) as conn:  # rows of an older extraction, as a past release left them
        conn.execute("UPDATE tool_calls SET extraction = NULL, conventions = NULL")
        conn.execute("UPDATE traces SET extraction = NULL, conventions = NULL")
        conn.execute("UPDATE spans SET role = NULL, tool_name = NULL")
        total = conn.execute("SELECT count(*) FROM traces").fetchall()[0][0]
    done: list[int] = []

    def stop_after_two(rebuilt: int) -> None:
        done.append(rebuilt)
        if len(done) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # a tiny batch: one trace at a time
        reindex(db, max_spans=1, progress=stop_after_two)
    assert done == [1, 2]
    assert reindex(db).traces == total - 2  # the two rebuilt before the interruption are current
    assert reindex(db).traces == 0
    assert _rows(db) == _rows(fresh)


def _toy_trace(path: Path, trace_id: str = TID) -> Path:
    spans = [
        span_json(traceId=trace_id, spanId="00000000000000a1", parentSpanId="", name="toy run", attributes=[]),
        span_json(
            traceId=trace_id, spanId="00000000000000a2", parentSpanId="00000000000000a1", name="toy step",
            attributes=[
                {"key": "toy.tool", "value": {"stringValue": "get_weather"}},
                {"key": "toy.args", "value": {"stringValue": '{"location": "Paris"}'}},
            ],
        ),
    ]  # fmt: skip
    path.write_bytes(req_json(*spans))
    return path


def test_the_conventions_are_the_stores_setting_not_the_environment(tmp_path: Path) -> None:
    db, trace = tmp_path / "s.duckdb", _toy_trace(tmp_path / "toy.json")
    toy = {"PYTHONPATH": os.pathsep.join(p for p in (TOY, os.environ.get("PYTHONPATH", "")) if p)}
    calls = "SELECT tool_name, conventions FROM tool_calls"
    # the first write records TRACELADDER_CONVENTIONS (how its users carry their choice over)
    first = cli("ingest", "--db", str(db), str(trace), env={**toy, "TRACELADDER_CONVENTIONS": "toyframework"})
    assert first.returncode == 0, first.stderr
    out = cli("sql", "--db", str(db), calls, "--json", env=toy)
    assert json.loads(out.stdout) == [{"tool_name": "get_weather", "conventions": "builtin,toyframework"}]
    # later, the variable is ignored (said once) and the store's setting reads the next trace
    second = _toy_trace(tmp_path / "toy2.json", "6" + TID[1:])
    r = cli("ingest", "--db", str(db), str(second), env={**toy, "TRACELADDER_CONVENTIONS": ""})
    assert r.returncode == 0 and r.stderr.count("is ignored") == 1, r.stderr
    out = cli("sql", "--db", str(db), "SELECT count(*) AS n FROM tool_calls", "--json", env=toy)
    assert json.loads(out.stdout) == [{"n": 2}]
    # `reindex --conventions` changes the setting and rebuilds every trace with it
    r = cli("reindex", "--db", str(db), "--conventions", "", env=toy)
    assert r.returncode == 0, r.stderr
    out = cli("sql", "--db", str(db), "SELECT count(*) AS n FROM tool_calls", "--json", env=toy)
    assert json.loads(out.stdout) == [{"n": 0}]
    # a plug-in that is not installed is refused in one line, and the setting stays
    r = cli("reindex", "--db", str(db), "--conventions", "nosuchthing", env=toy)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "nosuchthing" in r.stderr
    r = cli("sql", "--db", str(db), "SELECT value FROM store_settings WHERE name = 'conventions'", "--json")
    assert json.loads(r.stdout) == [{"value": ""}]


def test_a_bad_where_is_one_line_and_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    assert cli_in_process("ingest", "--db", str(db), FILES[0]).returncode == 0
    for where in ("no_such_column = 1", "1 = 1; DROP TABLE spans"):
        r = cli("reindex", "--db", str(db), "--where", where)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--where" in r.stderr, r.stderr
    out = cli_in_process("sql", "--db", str(db), "SELECT count(*) AS n FROM traces WHERE spans > 0", "--json")
    (count,) = json.loads(out.stdout)
    assert count["n"] > 0
    r = cli("reindex", "--db", str(db), "--all", "--where", "spans > 0")
    assert r.returncode == 0 and r.stdout.startswith(f"reindexed traces={count['n']} "), r.stdout


def _unread_verdicts(db: Path) -> dict[str, tuple[str, str]]:
    r = cli_in_process("sql", "--db", str(db), "SELECT trace_id, verdict, explanation FROM results", "--json")
    assert r.returncode == 0, r.stderr
    return {row["trace_id"]: (row["verdict"], row["explanation"] or "") for row in json.loads(r.stdout)}


def test_a_trace_no_extraction_read_is_never_passed_and_reindex_reads_it(
    twelve: Path, tmp_path: Path
) -> None:
    """Spans without their derived rows (copied in by SQL, a write cut between the two): such a
    trace is NOT_EVALUATED with the reason, never judged as a trace that made no calls (a PASS),
    and `reindex` reads it — then it is judged as a fresh ingest of the same spans is."""
    db, fresh = _copies(twelve, tmp_path)
    with duckdb.connect(str(db)) as conn:  # half the traces lose every derived row
        ids = [r[0] for r in conn.execute("SELECT trace_id FROM traces ORDER BY trace_id").fetchall()][::2]
        with_calls = conn.execute(
            "SELECT count(DISTINCT trace_id) FROM tool_calls WHERE list_contains($ids, trace_id)",
            {"ids": ids},
        ).fetchall()[0][0]
        for table in ("tool_calls", "tool_definitions", "traces"):
            conn.execute(f"DELETE FROM {table} WHERE list_contains($ids, trace_id)", {"ids": ids})
    assert ids and with_calls, "the fixtures chosen hold traces with calls"
    assert cli_in_process("evaluate", "--db", str(db)).returncode == 0
    before = _unread_verdicts(db)
    for trace_id in ids:
        verdict, explanation = before[trace_id]
        assert verdict == "NOT_EVALUATED" and "no extraction has read this trace" in explanation, trace_id
    assert reindex(db).traces == len(ids)
    assert reindex(db).traces == 0
    assert _rows(db) == _rows(fresh)
    assert cli_in_process("evaluate", "--db", str(db)).returncode == 0
    assert cli_in_process("evaluate", "--db", str(fresh)).returncode == 0
    after, expected = _unread_verdicts(db), _unread_verdicts(fresh)
    assert {t: v for t, (v, _) in after.items()} == {t: v for t, (v, _) in expected.items()}
