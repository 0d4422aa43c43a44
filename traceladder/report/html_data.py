"""The numbers the HTML report shows beyond a ReportV1's own: intervals, rates by tool, the ladder's
reach, the differences between two runs. Pure: ReportV1 dicts in, plain values out.

Verdicts, classes and diffs are never recomputed here — only counted, as the report states them.
A pass rate is the report's accuracy, PASS / (PASS + FAIL); its interval is Wilson's 95% score
interval (`report.stats.wilson`, the one `trend` uses).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from traceladder.evaluate.rungs import call_match
from traceladder.evaluate.rungs.types import SCORED, VerdictValue
from traceladder.report.build import result_name
from traceladder.report.documents import ReportV1, Result
from traceladder.report.html_digest import PageDigest, case_tools
from traceladder.report.stats import wilson


@dataclass(frozen=True)
class Rate:
    """`passed` of `scored`, with its Wilson 95% interval; `value` None when nothing was scored."""

    passed: int
    scored: int

    @property
    def value(self) -> float | None:
        return self.passed / self.scored if self.scored else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.passed, self.scored) if self.scored else None


def rate_of(block: Mapping[str, Any]) -> Rate:
    """The rate of a report block (the summary or one dimension's)."""
    counts = block["verdict_counts"]
    return Rate(counts.get(VerdictValue.PASS, 0), sum(counts.get(v, 0) for v in SCORED))


def case_name(case: Result) -> str:
    """`fc-d1-002`, `fc-d1-002#1` for a repeat, or a trace id prefix for a trace with no case."""
    return result_name(case)


def by_tool(report: ReportV1, digest: PageDigest) -> list[dict[str, Any]]:
    """Per tool: the scored cases that expected or called it, their rate, and how many failing
    cases a finding implicates it in (the report's `worst_tools`). Most failures first."""
    implicated = report["summary"].get("worst_tools") or {}
    rows = [
        {"tool": tool, "rate": Rate(passed, scored), "implicated": implicated.get(tool, 0)}
        for tool, (passed, scored) in digest.tools.items()
    ]
    return sorted(rows, key=lambda r: (r["rate"].value if r["rate"].value is not None else 2, r["tool"]))


@dataclass(frozen=True)
class LadderReach:
    """How far traces climbed: the top rung that exists, how many traces it judged, how many no
    rung settled (agent errors, traces no rung could judge)."""

    top_rung: int | None
    top_names: tuple[str, ...]
    reached_top: int
    unsettled: int
    total: int


def ladder_reach(report: ReportV1, digest: PageDigest) -> LadderReach:
    ladder = report["summary"].get("ladder") or []
    names = tuple(r["name"] for r in ladder if r["rung"] == digest.top_rung)
    unsettled = sum(digest.unsettled.values())
    return LadderReach(digest.top_rung, names, digest.reached_top, unsettled, digest.total)


def argument_diffs(case: Result) -> list[dict[str, Any]]:
    """Every argument difference any rung recorded for the case, with the rung and call it is about:
    from the report's `diff` (the checks of failing rungs that record a difference), or, in a report
    without one, from each rung's checks."""
    if "diff" in case:
        checks = [(c["rung"], c["rung_name"], c) for c in case["diff"] or []]
    else:
        checks = [(r["rung"], r["name"], c) for r in case.get("rungs") or [] for c in r.get("checks") or []]
    return [
        {"rung": rung, "rung_name": name, "tool": check.get("actual_tool") or check.get("expected_tool"),
         "ordinal": check.get("actual_ordinal"), **diff}
        for rung, name, check in checks
        for diff in check.get("diffs") or []
    ]  # fmt: skip


def call_pairs(case: Result) -> list[dict[str, Any]]:
    """Expected calls next to actual calls. When rung 2 recorded its checks (it did not pass), its
    pairing is used — each check names the expected tool and the actual call's ordinal; golden
    calls are taken in order for repeated tools. Otherwise the two lists side by side, in order.
    Each pair: `status` (the check's, or None), `expected` (golden call or None), `actual` (call
    or None), `check` (or None)."""
    golden = list(case.get("golden") or [])
    actual = {c["ordinal"]: c for c in case.get("actual") or []}
    checks = next((r.get("checks") for r in case.get("rungs") or [] if r["name"] == call_match.NAME), None)
    if not checks:
        calls = list(actual.values())
        width = max(len(golden), len(calls))
        return [
            {
                "status": None,
                "check": None,
                "expected": golden[i] if i < len(golden) else None,
                "actual": calls[i] if i < len(calls) else None,
            }
            for i in range(width)
        ]
    unused = list(range(len(golden)))
    pairs, seen = [], set()
    for check in checks:
        expected = None
        for i in unused:
            if golden[i].get("tool") == check.get("expected_tool"):
                expected = golden[i]
                unused.remove(i)
                break
        ordinal = check.get("actual_ordinal")
        seen.add(ordinal)
        pairs.append(
            {
                "status": check.get("status"),
                "check": check,
                "expected": expected,
                "actual": actual.get(ordinal) if ordinal is not None else None,
            }
        )
    pairs += [{"status": None, "check": None, "expected": golden[i], "actual": None} for i in unused]
    pairs += [
        {"status": None, "check": None, "expected": None, "actual": c}
        for o, c in actual.items()
        if o not in seen
    ]
    return pairs


def _key(case: Result) -> tuple[str, int]:
    return (case["case_id"] or case["trace_id"], case.get("repeat_index") or 0)


@dataclass(frozen=True)
class Comparison:
    """This run against another: verdict flips by case, pass-rate deltas overall and by dimension."""

    other_run: Mapping[str, Any]
    flips: list[dict[str, Any]]  # case, dimension, before, after, explanation (this run's)
    dimensions: list[tuple[str, Rate, Rate]]  # name, this run, the other; "all" first
    only_here: int
    only_there: int


def compare(report: ReportV1, other: ReportV1) -> Comparison:
    """Cases are matched by (case id, repeat); a trace with no case by its trace id."""
    mine = {_key(c): c for c in report["results"]}
    theirs = {_key(c): c for c in other["results"]}
    flips = [
        {"case": mine[k], "before": theirs[k]["verdict"], "after": mine[k]["verdict"]}
        for k in sorted(mine.keys() & theirs.keys())
        if mine[k]["verdict"] != theirs[k]["verdict"]
    ]
    s, o = report["summary"], other["summary"]
    names = list(s["dimensions"]) + [d for d in o["dimensions"] if d not in s["dimensions"]]
    empty: dict[str, Any] = {"verdict_counts": {}}
    dims = [("all", rate_of(s), rate_of(o))] + [
        (d, rate_of(s["dimensions"].get(d, empty)), rate_of(o["dimensions"].get(d, empty))) for d in names
    ]
    return Comparison(
        other["run"], flips, dims, len(mine.keys() - theirs.keys()), len(theirs.keys() - mine.keys())
    )


def index(cases: Sequence[Result]) -> list[dict[str, Any]]:
    """What the page's script filters and sorts on, one entry per case row, in row order."""
    return [
        {
            "case": case_name(c),
            "trace_id": c["trace_id"],
            "dimension": c.get("dimension") or "",
            "verdict": c["verdict"],
            "failure_class": c.get("taxonomy") or "",
            "settled_at": c.get("settled_at") if c.get("settled_at") is not None else 99,
            "settled_by": c.get("settled_by") or "",
            "tools": case_tools(c),
        }
        for c in cases
    ]


def distinct(values: Iterable[str | None]) -> list[str]:
    """Sorted, without empties: the options of a filter."""
    return sorted({v for v in values if v})
