"""A trace whose inputs equal one judged in the batch before is not judged again (decision 551):
the pool keeps the last two batches' verdicts by dedupe key. Counted with a real plug-in rung
that notes every climb, on a run's repeats (identical traces) judged as two batches; the rows
are the ones judging them in one batch writes."""

from __future__ import annotations

import importlib.util

from conftest import cli

from traceladder.evaluate.assemble import build_context
from traceladder.evaluate.pool import SettlePool
from traceladder.evaluate.rungs.ladder import BUILTIN, Ladder
from traceladder.store.db import Store
from traceladder.store.readers import read_call_table, read_units

COUNTING_RUNG = """
NUMBER = 3
NAME = "counting"
NEEDS = frozenset()
SURVIVORS_ONLY = False
CLIMBS = []


def evaluate(inputs, analysis):
    from traceladder.plugin_api.rungs import RungResult

    CLIMBS.append(inputs.trace_id)
    return RungResult(NUMBER, NAME, "pass", {}, explanation="counted")
"""


def _counting_rung(tmp_path):
    path = tmp_path / "counting_rung.py"
    path.write_text(COUNTING_RUNG)
    spec = importlib.util.spec_from_file_location("counting_rung", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(tables):
    rows = {}
    for name in ("traces", "rungs", "findings"):
        found = [r for t in tables for r in getattr(t, name).to_pylist()]
        for r in found:
            r.pop("evaluated_at", None)
        rows[name] = sorted(found, key=repr)
    return rows


def test_a_repeat_in_the_next_batch_is_not_judged_again(tmp_path):
    db = tmp_path / "r.duckdb"
    done = cli(
        "run", "--model", "sim:oracle", "--case", "fc-d1-001", "--repeat", "3", "--db", str(db), "--no-report"
    )
    assert done.returncode == 0, done.stderr
    with Store(db) as store:
        units = read_units(store)
        calls = read_call_table(store, [u.trace_id for u in units])
    assert len(units) == 3
    rung = _counting_rung(tmp_path)
    ctx = build_context(units, Ladder(BUILTIN).with_rungs([rung]))

    with SettlePool(ctx, workers=1) as pool:
        for unit in units:  # a batch each
            pool.submit([unit], calls)
        apart = list(pool.results())
    assert len(rung.CLIMBS) == 1  # the two repeats in later batches reuse the first's verdict

    with SettlePool(ctx, workers=1) as pool:
        pool.submit(units, calls)
        together = list(pool.results())
    assert _rows(apart) == _rows(together)
    assert len({r["trace_id"] for r in _rows(apart)["traces"]}) == 3


def test_the_memo_forgets_what_two_batches_did_not_see(tmp_path):
    """Bounded: a verdict not used in the last two batches is judged again (memory holds at most
    two batches' distinct verdicts, whatever the size of the store)."""
    db = tmp_path / "r.duckdb"
    args = ("run", "--model", "sim:oracle", "--case", "fc-d1-001", "--case", "fc-d2-001", "--repeat", "2")
    done = cli(*args, "--db", str(db), "--no-report")
    assert done.returncode == 0, done.stderr
    with Store(db) as store:
        units = read_units(store)
        calls = read_call_table(store, [u.trace_id for u in units])
    first = [u for u in units if u.case_id == "fc-d1-001"]
    second = [u for u in units if u.case_id == "fc-d2-001"]
    rung = _counting_rung(tmp_path)
    ctx = build_context(units, Ladder(BUILTIN).with_rungs([rung]))
    with SettlePool(ctx, workers=1) as pool:
        # d1, d2, d2, d1: the last d1 comes two batches after d1 was last used
        for unit in (first[0], second[0], second[1], first[1]):
            pool.submit([unit], calls)
        list(pool.results())
    assert [first[0].trace_id, second[0].trace_id, first[1].trace_id] == rung.CLIMBS
