"""`compare` as a workflow (the leaderboard, `workflows/leaderboard.py`, shares its checks): runs
read from the store, checked to be runs of one suite, turned into their ReportV1s (for `compare`:
their heads, and the results joined by case a batch at a time, `store.run_pairs`), handed to the
pure builders in `reporting`.

Comparable means *the same cases*: the `cases` input hash of every run is equal. The model,
prompt, tool schemas and configuration may differ — comparing them is the point — and the
comparison says which did. Runs are judged evidence only when complete and fully evaluated, as
for the gate; a side of several runs must be repetitions of one model with identical inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from traceladder.errors import UserError
from traceladder.report.comparison import SAME_SUITE_KEY, Pairing
from traceladder.report.documents import ComparisonV1, ReportV1
from traceladder.store.db import Store, open_store
from traceladder.store.run_pairs import case_trials, failure_details
from traceladder.store.run_report import REPORT_MEMORY
from traceladder.store.runs import RunInfo, run_info
from traceladder.suite.domain.registry import is_installed, load_domain
from traceladder.workflows.report_files import open_report


@dataclass(frozen=True)
class CompareRequest:
    """Side `run_a` (the reference) against side `run_b` (the candidate), each one run or several
    repetitions of one model; `alpha`: the significance level of McNemar's exact test."""

    run_a: tuple[str, ...]
    run_b: tuple[str, ...]
    alpha: float = 0.05


@dataclass(frozen=True)
class CompareResult:
    """The ComparisonV1 document; `b_worse`: B is significantly worse (the command exits 1)."""

    comparison: ComparisonV1

    @property
    def b_worse(self) -> bool:
        return bool(self.comparison["mcnemar"]["b_worse"])


def compare(db: Path, request: CompareRequest) -> CompareResult:
    """The `compare` command's workflow: `compare_runs` on the store at `db`, read only."""
    # DuckDB's share as for a report: the results are joined by case and sorted under it, a batch
    # at a time into Python (decision 480)
    with open_store(db, read_only=True) as store, store.memory_limit(REPORT_MEMORY, threads=1):
        return CompareResult(compare_runs(store, request.run_a, request.run_b, alpha=request.alpha))


class NotComparable(UserError):
    """The runs are not runs of the same suite (exit 2, like the gate's "not comparable")."""


def run_group(text: str) -> tuple[str, ...]:
    """`RUN` or `RUN1,RUN2,RUN3`: one side of a comparison. ValueError for an empty member."""
    ids = tuple(part.strip() for part in text.split(","))
    if not all(ids):
        raise ValueError(f"{text!r}: give a run id, or run ids separated by commas")
    return ids


def complete_infos(store: Store, ids: Sequence[str]) -> list[RunInfo]:
    """The runs' records; `UserError` naming the first run that did not finish."""
    infos = [run_info(store, r) for r in ids]
    for info in infos:
        if not info.complete:
            raise UserError(f"not compared: {info.incompleteness()}")
    return infos


def _check_group(name: str, infos: Sequence[RunInfo]) -> None:
    first = infos[0]
    for info in infos[1:]:
        if info.model != first.model or info.input_hashes != first.input_hashes:
            raise UserError(
                f"side {name} mixes runs {first.run_id} and {info.run_id}, which differ in model or inputs; "
                "a side of several runs must repeat one model and configuration"
            )


def check_same_suite(infos: Sequence[RunInfo]) -> None:
    """`NotComparable` unless every run ran the same cases (same `cases` hash, same domain)."""
    first = infos[0]
    for info in infos[1:]:
        if info.input_hashes.get(SAME_SUITE_KEY) != first.input_hashes.get(SAME_SUITE_KEY):
            raise NotComparable(
                f"runs {first.run_id} and {info.run_id} are not comparable: different case hash "
                "(they ran different suites)"
            )
        if (info.domain or None) != (first.domain or None):
            raise NotComparable(
                f"runs {first.run_id} and {info.run_id} are not comparable: different domain "
                f"({first.domain} vs {info.domain})"
            )


def _dimensions(domain: str | None, report: ReportV1) -> dict[str, str] | tuple[str, ...]:
    """The suite's dimensions in order: named as the reference run's report names them (the
    names its run recorded), else the installed domain's."""
    names = report["summary"].get("dimension_names")
    if names:
        return dict(names)
    if domain and is_installed(domain):
        suite = load_domain(domain).suite
        return dict(suite.dimensions) if suite else ()
    return ()


def compare_runs(store: Store, a: Sequence[str], b: Sequence[str], *, alpha: float = 0.05) -> ComparisonV1:
    """The ComparisonV1 of side `a` (reference) and `b` (candidate). `UserError` for an unknown,
    incomplete or repeated run or a mixed side; `NotComparable` for runs of different suites."""
    repeated = sorted((set(a) & set(b)) | {r for r in (*a, *b) if [*a, *b].count(r) > 1})
    if repeated:
        raise UserError(f"run {repeated[0]} is named more than once; each run is one side's trials")
    infos_a, infos_b = complete_infos(store, a), complete_infos(store, b)
    check_same_suite([*infos_a, *infos_b])
    _check_group("A", infos_a)
    _check_group("B", infos_b)
    # The reports' heads (run block, summary: counted in SQL), then the results joined by case a
    # batch at a time: memory holds counts and flips, never a side's results (decision 480).
    heads_a = [open_report(store, r).head for r in a]
    heads_b = [open_report(store, r).head for r in b]
    pairing = Pairing()
    for case_id, trials_a, trials_b in case_trials(store, a, b):
        pairing.add(case_id, trials_a, trials_b)
    comparison = pairing.comparison(
        [h["run"] for h in heads_a], [h["run"] for h in heads_b], alpha=alpha,
        dimensions=_dimensions(infos_a[0].domain, heads_a[0]),
        details=lambda failing: failure_details(store, [t["trace_id"] for t in failing]),
    )  # fmt: skip
    if not comparison["paired_cases"]:  # "0/0 … no significant difference" would be a verdict on nothing
        only = f"A ran {len(comparison['only_a'])}, B ran {len(comparison['only_b'])} other cases"
        raise UserError(
            f"not compared: the runs have no scored case in common ({only}, "
            f"{len(comparison['unpaired'])} without a scored trial on both sides)"
        )
    return comparison
