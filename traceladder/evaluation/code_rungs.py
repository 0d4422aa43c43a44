"""The code rungs' verdict of one recorded suite trace, as soon as its case has finished — what a
run's progress line shows.

It is the evaluation's own path, not a second one: the units query, the context, `settle_batch`
and the ladder that `evaluate_store` uses after the run, on exactly one trace, writing nothing.
What it cannot know is rung 5: the judge sees the survivors of the whole run (one budget, one
cache), so when a judge is configured a PASS here is "passed every code rung" and may still fail
at rung 5; a FAIL, SKIP or AGENT_ERROR here is final, because no trace a code rung failed ever
reaches the judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from traceladder.cases.model import Case
from traceladder.evaluation.assemble import Context, build_context
from traceladder.evaluation.pool import settle_batch
from traceladder.evaluators.ladder import Ladder
from traceladder.storage.db import Store
from traceladder.storage.readers import read_call_table, read_units


@dataclass(frozen=True)
class CodeVerdict:
    """A trace's verdict by the code rungs: the fold's verdict, failure class and settling rung."""

    verdict: str
    failure_class: str | None
    settled_at: int | None
    settled_by: str | None


class CodeRungVerdicts:
    """Judge single traces of one run by the code rungs (and installed plug-in rungs in `ladder`).

    The context — the domain, its cases and their golden end states — is built once, at the first
    trace. `of(trace_id)` is None for a trace with no recorded case (it is not a unit yet)."""

    def __init__(
        self, store: Store, run_id: str, *, domain: str, cases_path: Path | None = None,
        cases: Sequence[Case] | None = None, ladder: Ladder,
    ) -> None:  # fmt: skip
        self.store, self.run_id, self.domain, self.cases_path, self.cases, self.ladder = (
            store, run_id, domain, cases_path, cases, ladder,
        )  # fmt: skip
        self._ctx: Context | None = None

    def of(self, trace_id: str) -> CodeVerdict | None:
        units = read_units(self.store, self.run_id, [trace_id])
        if not units:
            return None
        if self._ctx is None:
            self._ctx = build_context(
                units, self.ladder, domain=self.domain, cases_path=self.cases_path, cases=self.cases
            )
        tables = settle_batch(units, read_call_table(self.store, [trace_id]), self._ctx).traces
        row = tables.select(["verdict", "failure_class", "settled_at", "settled_by"]).to_pylist()[0]
        return CodeVerdict(row["verdict"], row["failure_class"], row["settled_at"], row["settled_by"])
