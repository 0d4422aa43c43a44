"""`traceladder run`'s progress: one line per finished case on stderr, in completion order —

    [3/72] fc-d1-003 FAIL PARAM_HALLUCINATED_ID at rung 2 (call_match) · eta 41s
    [4/72] fc-d1-004 PASS by the code rungs; rung 5 after the run · eta 40s
    [5/72] fc-d3-005 AGENT_ERROR api_error (http_500) · eta 39s

— the case's verdict by the code rungs (`evaluate.code_rungs`; an agent error is its own
verdict) and the time left at the rate cases finished so far in this process. On a terminal the
same lines scroll above a bar. Without an evaluation to follow (`--no-report`) a line says only
that the case was answered.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from traceladder.evaluate.code_rungs import CodeRungVerdicts, CodeVerdict
from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.produce.agent.client import announce_default
from traceladder.produce.agent.runner import CaseEnd
from traceladder.text import printable
from traceladder.workflows.run_request import Progress, ProgressFor, RunOutline


def duration(seconds: float) -> str:
    """41s, 2m05s, 1h02m: the precision an estimate has."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def verdict_text(verdict: CodeVerdict, *, judge_after: bool) -> str:
    """What the code rungs decided. A FAIL names its class and the rung that settled it; a PASS
    says whether rung 5 is still to come (the judge runs on the survivors after the run)."""
    if verdict.verdict == VerdictValue.FAIL:
        return f"FAIL {verdict.failure_class or 'failed'} at rung {verdict.settled_at} ({verdict.settled_by})"
    if verdict.verdict == VerdictValue.PASS:
        return (
            f"{VerdictValue.PASS} by the code rungs; rung 5 after the run"
            if judge_after
            else VerdictValue.PASS
        )
    return verdict.verdict


class RunProgress:
    """The progress callback of one run. `judge_after`: the evaluation after the run includes
    rung 5. Each case's line shows its code-rung verdict when the workflow hands `start` the
    run's settlement (it does whenever an evaluation follows), else only how the case ended."""

    def __init__(self, *, judge_after: bool, clock: Callable[[], float] = time.monotonic) -> None:
        self.judge_after, self.clock = judge_after, clock
        self.verdicts: CodeRungVerdicts | None = None
        self.started_at = clock()

    def start(self, run_id: str, verdicts: CodeRungVerdicts | None = None) -> None:
        """The run is recorded and its first case about to start: the clock of the estimate.
        `verdicts`: the run's own settlement of each case (the workflow reuses it in the
        evaluation after the run); None when no evaluation follows."""
        self.started_at = self.clock()
        self.verdicts = verdicts

    def status(self, end: CaseEnd) -> str:
        if end.outcome.status == "error" or self.verdicts is None:
            return end.status
        turns = [t.trace_id for t in end.outcome.turns] or [end.outcome.trace_id]
        try:
            verdicts = [self.verdicts.of(trace_id) for trace_id in turns]
        except Exception:  # a progress line never stops a run; the evaluation after it will say why
            return end.status
        if None in verdicts:
            return end.status
        settled = [v for v in verdicts if v is not None]
        if not end.outcome.turns:
            return verdict_text(settled[0], judge_after=self.judge_after)
        # A conversation: its verdict folds every turn and the findings across them, decided by the
        # evaluation after the run; the line says what the turns' code rungs found, never more.
        for turn, verdict in enumerate(settled, 1):
            if verdict.verdict != VerdictValue.PASS:
                return f"turn {turn} {verdict_text(verdict, judge_after=self.judge_after)}"
        passed = f"{len(settled)} turns {VerdictValue.PASS} by the code rungs"
        return f"{passed}; the conversation is judged after the run"

    def eta(self, end: CaseEnd) -> str:
        finished_here = end.done - end.resumed
        if finished_here <= 0:
            return "eta —"
        per_case = (self.clock() - self.started_at) / finished_here
        return f"eta {duration(per_case * (end.total - end.done))}"

    def line(self, end: CaseEnd) -> str:
        return f"[{end.done}/{end.total}] {printable(end.case_id)} {self.status(end)} · {self.eta(end)}"

    def __call__(self, end: CaseEnd) -> None:
        print(self.line(end), file=sys.stderr, flush=True)

    @contextmanager
    def on_terminal(self, model: str) -> Iterator[Callable[[CaseEnd], None]]:
        """The same lines above a live bar, for a terminal."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.text import Text

        # No rich remaining-time column: each line's estimate excludes the cases a --resume found done.
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(f"running {printable(model)}", total=None)

            def tick(end: CaseEnd) -> None:
                bar.console.print(Text(self.line(end)))
                bar.update(task, completed=end.done, total=end.total)

            yield tick


class _Shown:
    """A run's progress as the workflow sees it: `start` says which model runs when it was
    defaulted (only once the run really starts: an error stays the only line) and starts the
    clock; each finished case goes to `tick` (the plain line, or the line above a bar)."""

    def __init__(self, progress: RunProgress, outline: RunOutline, tick: Callable[[CaseEnd], None]) -> None:
        self.progress, self.outline, self.tick = progress, outline, tick

    def start(self, run_id: str, verdicts: CodeRungVerdicts | None) -> None:
        if self.outline.defaulted is not None:
            announce_default(self.outline.defaulted)
        self.progress.start(run_id, verdicts)

    def __call__(self, end: CaseEnd) -> None:
        self.tick(end)


def progress_for(*, stderr_is_terminal: bool) -> ProgressFor:
    """`run`'s and `baseline init`'s progress for a run about to start: one line per case on
    stderr, above a live bar when stderr is a terminal."""

    @contextmanager
    def shown(outline: RunOutline) -> Iterator[Progress | None]:
        progress = RunProgress(judge_after=outline.judge_after)
        if not stderr_is_terminal:
            yield _Shown(progress, outline, progress)
            return
        with progress.on_terminal(outline.model) as tick:
            yield _Shown(progress, outline, tick)

    return shown
