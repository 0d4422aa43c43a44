"""The leaderboard as a workflow: runs of one suite side by side, with their cost. A module of its own
because pricing a run loads the judge's price table and the simulator's names, which `compare`
does not need (`report --leaderboard` imports it when asked)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.evaluate.judge.prices import load_prices
from traceladder.produce.agent.sim import is_sim
from traceladder.report.leaderboard import leaderboard
from traceladder.report.repeatability import listed_twice
from traceladder.store.db import Store
from traceladder.store.runs import run_usage
from traceladder.workflows.compare_runs import check_same_suite, complete_infos
from traceladder.workflows.report_files import load_report


def leaderboard_of(store: Store, run_ids: Sequence[str], *, prices: Path | None = None) -> dict[str, Any]:
    """The LeaderboardV1 of runs of one suite (`NotComparable` otherwise). Cost uses the shipped
    price table, extended by `prices` (the judge's format: USD per million tokens)."""
    twice = listed_twice(run_ids)
    if twice:
        raise UserError(f"run {twice} is listed more than once")
    if len(run_ids) < 2:
        raise UserError("a leaderboard needs at least two runs; for one run use `traceladder report RUN`")
    check_same_suite(complete_infos(store, run_ids))
    table = load_prices(prices)

    def price(model: str, tokens_in: int, tokens_out: int) -> float | None:
        return 0.0 if is_sim(model) else table.cost(model, tokens_in, tokens_out)

    entries = [(load_report(store, r), asdict(run_usage(store, r))) for r in run_ids]
    return leaderboard(entries, price=price)
