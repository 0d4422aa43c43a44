"""Rung 5 in a sharded evaluation (issues 13 + 15): the shards run the code rungs and return their
survivors; the client judges them once, with the cache, spans and budget in the results store.
The results are those of the in-store `evaluate` with the same judge, row for row."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import cli, rows
from scale_helpers import results
from scripted_server import JudgeServer

SIM = ["--judge-model", "sim:judge"]


@pytest.fixture(scope="module")
def data(scale_data) -> Path:
    return scale_data


@pytest.fixture(scope="module")
def judged_in_store(data, tmp_path_factory) -> Path:
    """The reference: the dataset's store judged where it is, by the simulated judge — asked afresh
    (`run` already judged its traces once; a fresh results store has no cache)."""
    db = tmp_path_factory.mktemp("judged") / "store.duckdb"
    shutil.copy(data / "store.duckdb", db)
    done = cli("evaluate", "--db", str(db), *SIM, "--no-cache")
    assert done.returncode == 0, done.stderr
    return db


def judgments(db: Path) -> list[tuple]:
    """Every trace's judgment row, without when it was made and the id of the judge's own trace."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "SELECT * EXCLUDE (evaluated_at, judge_trace_id) FROM trace_judgments ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()


def judge_calls(stderr: str) -> tuple[int, int]:
    line = next(x for x in stderr.splitlines() if x.startswith("traceladder: judge: "))
    words = dict(w.split("=") for w in line.split()[2:])
    return int(words["calls"]), int(words["cache_hits"])


def test_a_parquet_source_gets_the_judge_the_store_gets(data, judged_in_store, tmp_path):
    """No judge named: the export's spans say their runs used a simulated model, so `evaluate
    --source parquet:…` judges with sim:judge exactly as `evaluate` on the store does — the same
    verdicts (a default judge of none turned the judge's FAILs into PASSes)."""
    store = tmp_path / "store.duckdb"
    shutil.copy(data / "store.duckdb", store)
    in_store = cli("evaluate", "--db", str(store), "--no-cache")  # `run` judged it once: not "(cached)"
    assert in_store.returncode == 0 and "judge: calls=" in in_store.stderr, in_store.stderr
    db = tmp_path / "results.duckdb"
    done = cli("evaluate", "--db", str(db), "--source", f"parquet:{data / 'export'}")
    assert done.returncode == 0 and "judge: calls=" in done.stderr, done.stderr
    assert done.stdout.split(" ", 2)[2] == in_store.stdout.split(" ", 1)[1]  # runs=… and the verdicts
    assert results(db) == results(store) == results(judged_in_store)
    assert rows(db, "SELECT count(*) FROM trace_results WHERE verdict = 'FAIL' AND settled_by = 'judge'") != [
        (0,)
    ]


@pytest.mark.parametrize("dask", [[], ["--dask", "local:2"]], ids=["in_process", "dask"])
def test_a_sharded_evaluation_judges_like_the_store(data, judged_in_store, tmp_path, dask):
    db = tmp_path / "results.duckdb"
    source = ["--source", f"parquet:{data / 'export'}", "--shards", "3", *dask]
    done = cli("evaluate", "--db", str(db), *source, *SIM, timeout=300)
    assert done.returncode == 0, done.stderr
    assert results(db) == results(judged_in_store)
    assert judgments(db) == judgments(judged_in_store) and judgments(db)
    calls, hits = judge_calls(done.stderr)
    assert (calls, hits) == (len(rows(db, "SELECT 1 FROM judgments")), 0) and calls > 0
    # every call a GenAI chat span in the results store, linked to the trace it judged
    linked = rows(db, "SELECT links->0->>'trace_id' FROM spans WHERE source = 'judge' ORDER BY 1")
    assert linked == rows(
        db, "SELECT judged_trace_id FROM judgments ORDER BY 1"
    )  # one span per call, each to the trace that asked
    if not dask:  # evaluating again pays nothing: the cache is in the results store
        answered = len(rows(db, "SELECT 1 FROM trace_judgments WHERE outcome = 'judged'"))
        again = cli("evaluate", "--db", str(db), *source, *SIM)
        assert again.returncode == 0, again.stderr
        assert judge_calls(again.stderr) == (0, answered) and answered >= calls
        # without the judge, no trace keeps a judgment its new verdict was not decided with
        plain = cli("evaluate", "--db", str(db), *source, "--no-judge")
        assert plain.returncode == 0, plain.stderr
        assert rows(db, "SELECT count(*) FROM trace_judgments") == [(0,)]
        assert rows(db, "SELECT count(*) FROM judgments") == [(calls,)]  # the cache stays


def test_only_the_shards_survivors_reach_a_real_judge(data, tmp_path):
    reference = tmp_path / "codes.duckdb"
    shutil.copy(data / "store.duckdb", reference)
    assert cli("evaluate", "--db", str(reference), "--no-judge").returncode == 0
    passed = {t for (t,) in rows(reference, "SELECT trace_id FROM trace_results WHERE verdict = 'PASS'")}
    db = tmp_path / "results.duckdb"
    with JudgeServer("pass") as server:
        done = cli(
            "evaluate", "--db", str(db), "--source", f"parquet:{data / 'export'}", "--shards", "4",
            "--judge-model", "judge-1", "--judge-base-url", server.url, "--judge-budget", "5",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    asked = {t for (t,) in rows(db, "SELECT judged_trace_id FROM judgments")}
    assert len(server.trajectories) == len(asked) == 5 and asked <= passed  # a budget across shards
    outcomes = dict(rows(db, "SELECT outcome, count(*) FROM trace_judgments GROUP BY 1"))
    assert outcomes["judged"] >= 5 and outcomes.get("over_budget", 0) > 0
    judged = {t for (t,) in rows(db, "SELECT trace_id FROM trace_judgments")}
    assert judged <= passed  # a trace a code rung failed is never in front of the judge
    failed = rows(
        db,
        "SELECT count(*) FROM rung_results r JOIN trace_results t USING (trace_id) "
        "WHERE r.rung_name = 'judge' AND r.status = 'skipped' AND t.trace_id NOT IN "
        "(SELECT trace_id FROM trace_judgments)",
    )
    assert failed == [(len(rows(reference, "SELECT 1 FROM trace_results WHERE verdict = 'FAIL'")),)]


@pytest.mark.parametrize("scope", [["--sample", "0.5"], ["--run", "<suite>"]], ids=["sampled", "one_run"])
def test_a_sampled_or_one_run_sharded_evaluation_judges_like_the_store(data, tmp_path, scope):
    """The store itself as the source (its default judge is sim:judge: its runs are simulated)."""
    if scope[0] == "--run":
        scope = ["--run", rows(data / "store.duckdb", "SELECT run_id FROM runs")[0][0]]
    reference, sharded = tmp_path / "ref.duckdb", tmp_path / "sharded.duckdb"
    for db in (reference, sharded):
        shutil.copy(data / "store.duckdb", db)
    assert cli("evaluate", "--db", str(reference), *scope, "--no-cache").returncode == 0
    done = cli("evaluate", "--db", str(sharded), "--shards", "3", *scope, "--no-cache")
    assert done.returncode == 0, done.stderr
    assert "judge: calls=" in done.stderr  # the default judge ran
    assert results(sharded) == results(reference)
    assert judgments(sharded) == judgments(reference) and judgments(sharded)
