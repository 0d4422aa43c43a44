"""What the HTML page counts over every result of a report, folded one result at a time (issue 36).

The page shows at most `limit` cases (every one that did not pass first), but its sections count
all of them: the pass rate of each tool, how far traces climbed the ladder, which rungs could not
run and why, the failing cases of each class. `PageDigest.add` folds a result into those figures
and keeps a result only while it may still be shown, so a page of a 1M-trace run holds at most
`2 × limit` results, never the run. Pure: ReportV1 result dicts in, counts out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from traceladder.evaluate.rungs.types import SCORED, VerdictValue
from traceladder.report.build import result_name
from traceladder.report.documents import ReportV1, Result

NAMES_KEPT = 9  # case names kept per list: the page links at most 8 and says how many more


@dataclass
class Names:
    """The first `NAMES_KEPT` case names of a list, and how long the list is."""

    first: list[str] = field(default_factory=list)
    count: int = 0

    def add(self, name: str) -> None:
        if len(self.first) < NAMES_KEPT:
            self.first.append(name)
        self.count += 1


@dataclass
class NotRun:
    """One rung that could not run on some traces: on which, of what verdict, and why."""

    traces: Names = field(default_factory=Names)
    verdicts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)


@dataclass
class PageDigest:
    """The page's figures over every result `add`ed, and the results it shows (`shown`).

    `top_rung` is the highest rung of the report's ladder (its summary), whose pass/fail traces
    `reached_top` counts; `tools`: tool → [passed, scored] of the scored traces that expected or
    called it; `unsettled`: verdict → traces no rung settled; `not_run`: rung → `NotRun`;
    `fail_cases`: failure class → its FAIL cases, in report order."""

    limit: int
    top_rung: int | None = None
    total: int = 0
    tools: dict[str, list[int]] = field(default_factory=dict)
    reached_top: int = 0
    unsettled: Counter[str] = field(default_factory=Counter)
    not_run: dict[str, NotRun] = field(default_factory=dict)
    fail_cases: dict[str, Names] = field(default_factory=dict)
    _other: list[tuple[int, Result]] = field(default_factory=list)  # (report position, result)
    _passing: list[tuple[int, Result]] = field(default_factory=list)

    @classmethod
    def of(cls, report: ReportV1, limit: int) -> PageDigest:
        """An empty digest for the results of `report` (its summary names the ladder)."""
        ladder = report["summary"].get("ladder") or []
        return cls(limit, top_rung=max((r["rung"] for r in ladder), default=None))

    def add_all(self, results: Iterable[Result]) -> PageDigest:
        for result in results:
            self.add(result)
        return self

    def add(self, case: Result) -> None:
        """Fold one result, in report order."""
        self.total += 1
        name = result_name(case)
        verdict = case["verdict"]
        if verdict in SCORED:
            for tool in case_tools(case):
                counts = self.tools.setdefault(tool, [0, 0])
                counts[0] += verdict == VerdictValue.PASS
                counts[1] += 1
        rungs = case.get("rungs") or ()
        if any(g["rung"] == self.top_rung and g["status"] in ("pass", "fail") for g in rungs):
            self.reached_top += 1
        if not case.get("settled_by"):
            self.unsettled[verdict] += 1
        for r in rungs:
            if r.get("status") == "not_evaluated":
                seen = self.not_run.setdefault(r["name"], NotRun())
                seen.traces.add(name)
                seen.verdicts[verdict] += 1
                seen.reasons[str(r.get("explanation") or "no reason recorded")] += 1
        if verdict == VerdictValue.FAIL:
            self.fail_cases.setdefault(str(case.get("taxonomy")), Names()).add(name)
        # Shown: every result that did not pass, then the first passing ones, `limit` in all.
        kept = self._passing if verdict == VerdictValue.PASS else self._other
        if len(kept) < self.limit:
            kept.append((self.total, case))

    def shown(self) -> tuple[list[Result], int]:
        """(the results the table shows, in report order; how many it leaves out)."""
        shown = self._other[: self.limit]
        shown += self._passing[: self.limit - len(shown)]
        return [case for _, case in sorted(shown, key=lambda kept: kept[0])], max(0, self.total - self.limit)


def case_tools(case: Mapping[str, Any]) -> list[str]:
    """Every tool the case expected or the model called, first appearance first."""
    names = [g.get("tool") for g in case.get("golden") or []] + [
        c.get("tool") for c in case.get("actual") or []
    ]
    return list(dict.fromkeys(str(n) for n in names if n is not None))
