"""The code rungs' verdict of one recorded suite trace, as soon as its case has finished — what a
run's progress line shows.

It is the evaluation's own path, not a second one: the units query, the context, `settle_batch`
and the ladder that `evaluate_store` uses after the run, on exactly one trace, writing nothing.
What it cannot know is rung 5: the judge sees the survivors of the whole run (one budget, one
cache), so when a judge is configured a PASS here is "passed every code rung" and may still fail
at rung 5; a FAIL, SKIP or AGENT_ERROR here is final, because no trace a code rung failed ever
reaches the judge.

The tables it settles are kept (`settled`): the evaluation after the run takes them instead of
settling those traces again (`evaluate_store(settled=…)`), so each case is judged once. For that
they must be the evaluation's own first pass: `judge_tag` says a judge follows, as the
evaluation's context says it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from traceladder.evaluate.assemble import Context, build_context
from traceladder.evaluate.pool import settle_batch
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.store.db import Store
from traceladder.store.readers import read_call_table, read_units
from traceladder.store.results import ResultTables
from traceladder.suite.cases.model import Case


@dataclass(frozen=True)
class CodeVerdict:
    """A trace's verdict by the code rungs: the fold's verdict, failure class and settling rung."""

    verdict: str
    failure_class: str | None
    settled_at: int | None
    settled_by: str | None


_MERGE_EVERY = 256


def _merged(parts: Sequence[ResultTables]) -> ResultTables:
    both = ResultTables.concat(parts)
    return ResultTables(
        both.traces.combine_chunks(), both.rungs.combine_chunks(), both.findings.combine_chunks()
    )


class CodeRungVerdicts:
    """Judge single traces of one run by the code rungs (and installed plug-in rungs in `ladder`).

    The context — the domain, its cases and their golden end states — is built once, at the first
    trace. `of(trace_id)` is None for a trace with no recorded case (it is not a unit yet).
    `judge_tag`: the tag of the judge the evaluation after the run uses (None: no judge)."""

    def __init__(
        self, store: Store, run_id: str, *, domain: str, cases_path: Path | None = None,
        cases: Sequence[Case] | None = None, ladder: Ladder, judge_tag: str | None = None,
    ) -> None:  # fmt: skip
        self.store, self.run_id, self.domain, self.cases_path, self.cases, self.ladder = (
            store, run_id, domain, cases_path, cases, ladder,
        )  # fmt: skip
        self.judge_tag = judge_tag
        self._ctx: Context | None = None
        # what it settled, for the evaluation: one trace's tables each, merged every so often
        # (thousands of one-row Arrow tables would cost far more memory than their rows)
        self._parts: list[ResultTables] = []

    def of(self, trace_id: str) -> CodeVerdict | None:
        units = read_units(self.store, self.run_id, [trace_id])
        if not units:
            return None
        if self._ctx is None:
            ctx = build_context(
                units, self.ladder, domain=self.domain, cases_path=self.cases_path, cases=self.cases
            )
            if self.judge_tag is not None:  # as evaluate_store's context: rung 5 is decided after
                ctx = replace(ctx, judge_configured=True, judge_tag=self.judge_tag)
            self._ctx = ctx
        settled = settle_batch(units, read_call_table(self.store, [trace_id]), self._ctx)
        self._parts.append(settled)
        if len(self._parts) >= _MERGE_EVERY:
            self._parts = [_merged(self._parts)]
        tables = settled.traces
        row = tables.select(["verdict", "failure_class", "settled_at", "settled_by"]).to_pylist()[0]
        return CodeVerdict(row["verdict"], row["failure_class"], row["settled_at"], row["settled_by"])

    def settled(self) -> ResultTables | None:
        """The tables of every trace settled so far (None: none), for `evaluate_store(settled=…)`."""
        if not self._parts:
            return None
        merged = _merged(self._parts)
        self._parts = [merged]
        return merged
