"""ComparisonV1: model (or prompt, or configuration) A against B on the same suite. Pure: results
in, one plain dict out — `traceladder compare` prints it, `report --format html --compare`
renders the same dict, so the two can never show different numbers.

A side is one run or a group of runs of one model (e.g. the three runs a baseline was locked
from); its trials of a case are its results for that case in run order, then repeat order. Only
cases both sides tried are compared (`only_a`, `only_b` count the rest). Per case the paired
outcome is `paired.pair` (pass^k-style: all of the first k scored trials passed); McNemar's exact
test runs on those. Pass rates are the reports' own, PASS / (PASS + FAIL) over the trials of the
compared cases, with Wilson's 95% interval; failure classes count FAIL trials. Verdicts, classes
and evidence are the reports' — never re-judged here.

The comparison is built one case at a time (`Pairing`): it holds counts and flips, never a side's
results, so `compare` feeds it from the store a batch of results at a time (decision 480) and
`compare_sides` from whole ReportV1s in memory, through the same code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from traceladder.evaluate.rungs.types import VerdictValue as V
from traceladder.report.documents import (
    ClassRow,
    ComparisonSide,
    ComparisonV1,
    DimensionRow,
    Flip,
    FlipEvidence,
    McNemarBlock,
    SideRate,
)  # fmt: skip
from traceladder.report.paired import UNSCORED, McNemar, PairedOutcome, mcnemar, pair
from traceladder.report.stats import wilson

Side = Sequence[Mapping[str, Any]]  # the ReportV1s of one side, in order
Trial = Mapping[str, Any]  # one result of a case: verdict, taxonomy, dimension, trace_id, repeat_index
# Why each given failing trial failed: (its explanation, its first finding or None), in order.
Details = Callable[[Sequence[Trial]], Sequence[tuple[str | None, Mapping[str, Any] | None]]]

# The one input hash two runs must share to be compared at all: the same cases. The others
# (prompt, tool schemas, run configuration) may differ — that is what a comparison measures.
SAME_SUITE_KEY = "cases"


def trials(side: Side) -> dict[str, list[Mapping[str, Any]]]:
    """case id → its results on this side, in run order then repeat order. Traces without a case
    (live traffic) have nothing to pair with and are left out."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for report in side:
        for result in sorted(report["results"], key=lambda r: (str(r["case_id"]), r["repeat_index"] or 0)):
            if result["case_id"]:
                out.setdefault(result["case_id"], []).append(result)
    return out


def in_report(failing: Sequence[Trial]) -> list[tuple[str | None, Mapping[str, Any] | None]]:
    """`Details` of results as a ReportV1 holds them (each with its explanation and findings)."""
    return [(t.get("explanation"), next(iter(t.get("findings") or ()), None)) for t in failing]


def compare_sides(
    a: Side, b: Side, *, alpha: float = 0.05, dimensions: Mapping[str, str] | Sequence[str] = ()
) -> ComparisonV1:
    """The ComparisonV1 of side `a` (the reference) and side `b` (the candidate), from their whole
    ReportV1s in memory. `dimensions`: the suite's, in its order (others present follow, sorted),
    with their names when a mapping (each row's `title`: what the suite means by the code, or null)."""
    ta, tb = trials(a), trials(b)
    pairing = Pairing()
    for case_id in sorted(ta.keys() | tb.keys()):
        pairing.add(case_id, ta.get(case_id, ()), tb.get(case_id, ()))
    return pairing.comparison(
        [r["run"] for r in a], [r["run"] for r in b], alpha=alpha, dimensions=dimensions, details=in_report
    )


@dataclass
class _Counts:
    """A side's trials of some paired cases, counted: PASS, FAIL, AGENT_ERROR, FAIL by class."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    classes: Counter[str] = field(default_factory=Counter)

    def add(self, results: Sequence[Trial]) -> None:
        for r in results:
            verdict = r["verdict"]
            if verdict == V.PASS:
                self.passed += 1
            elif verdict == V.FAIL:
                self.failed += 1
                self.classes[r.get("taxonomy") or "?"] += 1
            elif verdict == V.AGENT_ERROR:
                self.errors += 1

    def rate(self) -> SideRate:
        """PASS / (PASS + FAIL), with Wilson's 95% interval."""
        n = self.passed + self.failed
        low, high = wilson(self.passed, n)
        rate = self.passed / n if n else None
        return {"passed": self.passed, "scored": n, "rate": rate, "interval": [low, high]}


@dataclass
class _Row:
    """One row of the per-dimension table (or the `all` row), counted case by case."""

    a: _Counts = field(default_factory=_Counts)
    b: _Counts = field(default_factory=_Counts)
    cases: int = 0
    regressed: int = 0
    improved: int = 0


@dataclass
class Pairing:
    """ComparisonV1 built one case at a time (`add`, cases in any order): it keeps the counts,
    each paired case's outcome and the flips, never the sides' results. The flips' evidence is
    read at the end (`comparison`'s `details`), for the flips' failing trials alone."""

    outcomes: list[PairedOutcome] = field(default_factory=list)
    rows: dict[str, _Row] = field(default_factory=dict)
    all: _Row = field(default_factory=_Row)
    trials_a: set[int] = field(default_factory=set)
    trials_b: set[int] = field(default_factory=set)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)
    flips: list[Flip] = field(default_factory=list)
    failing: list[Trial] = field(default_factory=list)  # each flip's failing trial, in `flips` order

    def add(self, case_id: str, a: Sequence[Trial], b: Sequence[Trial]) -> None:
        """One case's results on each side, in order (run order, then repeat order); a side that
        did not run the case has none."""
        if not a or not b:
            (self.only_a if a else self.only_b).append(case_id)
            return
        o = pair([r["verdict"] for r in a], [r["verdict"] for r in b])
        if o is None:
            self.unpaired.append(case_id)
            return
        self.outcomes.append(o)
        sa, sb = scored_results(a), scored_results(b)
        self.trials_a.add(len(sa))
        self.trials_b.add(len(sb))
        dimension = a[0].get("dimension") or ""
        for row in [self.all] + ([self.rows.setdefault(dimension, _Row())] if dimension else []):
            row.a.add(a)
            row.b.add(b)
            row.cases += 1
            row.regressed += o.a_pass and not o.b_pass
            row.improved += not o.a_pass and o.b_pass
        if o.a_pass == o.b_pass:
            return
        # the failing side's first failing trial among the k compared
        self.failing.append(next(r for r in (sb if o.a_pass else sa)[: o.k] if r["verdict"] != V.PASS))
        self.flips.append({
            "case_id": case_id, "dimension": dimension or None, "k": o.k,
            "direction": "regressed" if o.a_pass else "improved",
            "a": V.PASS if o.a_pass else V.FAIL, "b": V.PASS if o.b_pass else V.FAIL,
            "a_verdicts": [r["verdict"] for r in sa[: o.k]],
            "b_verdicts": [r["verdict"] for r in sb[: o.k]],
        })  # fmt: skip

    def comparison(
        self,
        runs_a: Sequence[Mapping[str, Any]],
        runs_b: Sequence[Mapping[str, Any]],
        *,
        alpha: float = 0.05,
        dimensions: Mapping[str, str] | Sequence[str] = (),
        details: Details = in_report,
    ) -> ComparisonV1:
        """The ComparisonV1 of the cases added: `runs_a`, `runs_b` are each side's ReportV1 run
        blocks in order; `details` tells why each flip's failing trial failed."""
        names = dimensions if isinstance(dimensions, Mapping) else {}
        present = sorted(set(self.rows) - set(dimensions))
        table: list[DimensionRow] = []
        for name in ["all", *[d for d in dimensions if d in self.rows], *present]:
            row = self.all if name == "all" else self.rows[name]
            ra, rb = row.a.rate(), row.b.rate()
            table.append({
                "dimension": name, "title": names.get(name), "a": ra, "b": rb, "delta": _delta(ra, rb),
                "cases": row.cases, "regressed": row.regressed, "improved": row.improved,
            })  # fmt: skip
        ca, cb = self.all.a.classes, self.all.b.classes
        classes: list[ClassRow] = [
            {"failure_class": cls, "a": ca[cls], "b": cb[cls], "delta": cb[cls] - ca[cls]}
            for cls in sorted(ca.keys() | cb.keys(), key=lambda k: (-abs(cb[k] - ca[k]), k))
        ]
        ea, eb = self.all.a.errors, self.all.b.errors
        if ea or eb:
            classes.append({"failure_class": V.AGENT_ERROR, "a": ea, "b": eb, "delta": eb - ea})
        flips: list[Flip] = [
            {**flip, "evidence": _evidence(trial, *told)}
            for flip, trial, told in zip(self.flips, self.failing, details(self.failing), strict=True)
        ]
        flips.sort(key=lambda f: (f["direction"] != "regressed", f["case_id"]))
        return {
            "schema": "ComparisonV1",
            "a": _side_block(runs_a, self.trials_a, self.all.a),
            "b": _side_block(runs_b, self.trials_b, self.all.b),
            "k": sorted({o.k for o in self.outcomes}),
            "differs": differences(runs_a, runs_b),
            "paired_cases": len(self.outcomes),
            "only_a": sorted(self.only_a),
            "only_b": sorted(self.only_b),
            "unpaired": sorted(self.unpaired),
            "mcnemar": _test_block(mcnemar(self.outcomes, alpha)),
            "dimensions": table,
            "classes": classes,
            "flips": flips,
        }


def _delta(a: SideRate, b: SideRate) -> float | None:
    return None if a["rate"] is None or b["rate"] is None else b["rate"] - a["rate"]


def _side_block(runs: Sequence[Mapping[str, Any]], trials: set[int], counts: _Counts) -> ComparisonSide:
    version = (runs[0].get("input_hashes") or {}).get("agent_version")
    # cast: mypy cannot follow the optional key unpacked in the middle (kept there: the JSON order)
    side = cast(
        ComparisonSide,
        {
            "runs": [r["run_id"] for r in runs],
            "model": runs[0]["model"],
            **({"agent_version": version} if version else {}),  # an agent under test's runs only
            "trials_per_case": sorted(trials),
            **counts.rate(),
        },
    )
    return side


def _evidence(failing: Trial, explanation: str | None, finding: Mapping[str, Any] | None) -> FlipEvidence:
    """Why a side failed a case, told by its failing trial."""
    return {
        "trace_id": failing["trace_id"],
        "repeat_index": failing["repeat_index"],
        "verdict": failing["verdict"],
        "failure_class": failing.get("taxonomy"),
        "explanation": explanation,
        "finding": dict(finding) if finding else None,
    }


def scored_results(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The results whose verdict counts as a trial (see `paired.scored`), in order."""
    return [r for r in results if r["verdict"] not in UNSCORED]


def differences(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> list[str]:
    """What differs between the two sides' first runs (ReportV1 run blocks): the model, then each
    input hash by name."""
    ra, rb = a[0], b[0]
    found = ["model"] if ra["model"] != rb["model"] else []
    ha, hb = ra.get("input_hashes") or {}, rb.get("input_hashes") or {}
    found += [key for key in sorted(set(ha) | set(hb)) if key != "inputs" and ha.get(key) != hb.get(key)]
    if ra.get("evaluator_version") != rb.get("evaluator_version"):
        found.append("evaluator_version")
    return found


def _test_block(test: McNemar) -> McNemarBlock:
    if test.b_worse:
        conclusion = "B is significantly worse than A"
    elif test.b_better:
        conclusion = "B is significantly better than A"
    else:
        conclusion = "no significant difference"
    return {
        "both_pass": test.both_pass, "b": test.b, "c": test.c, "both_fail": test.both_fail,
        "pairs": test.pairs, "p_value": test.p_value, "alpha": test.alpha,
        "significant": test.significant, "b_worse": test.b_worse, "conclusion": conclusion,
    }  # fmt: skip
