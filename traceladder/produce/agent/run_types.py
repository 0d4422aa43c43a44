"""The values a suite run is described by: its options, each finished case as the progress
callback sees it, and its summary."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from traceladder.produce.agent.breaker import DEFAULT_LIMIT
from traceladder.produce.agent.loop import AgentOutcome
from traceladder.suite.cases.validator import ValidSuite


@dataclass(frozen=True)
class RunOptions:
    case_ids: tuple[str, ...] = ()
    dimensions: tuple[str, ...] = ()
    repeat: int = 1
    concurrency: int = 4
    resume: str | None = None
    cases_path: Path | None = None
    # The suite, already read and validated by the caller (`cli.run_cmd`, which hands the same
    # cases to the progress line and the evaluation); None: the runner reads `cases_path`.
    suite: ValidSuite | None = None
    sim_delay_s: float = 0.0
    stop_after_errors: int = DEFAULT_LIMIT  # cases in a row with one endpoint error; 0: never
    user_model: str | None = None  # plays goal cases' users (`produce.agent.user_client`)
    user_base_url: str | None = None  # `--base-url` as given: the user model's, even for a sim: model


@dataclass(frozen=True)
class CaseEnd:
    """A case that just finished, as the progress callback sees it (in completion order)."""

    done: int  # cases of the run finished so far, those of an earlier process (`resumed`) included
    total: int
    resumed: int  # finished before this process started: a --resume
    case_id: str
    repeat_index: int
    outcome: AgentOutcome

    @property
    def status(self) -> str:
        return progress_status(self.outcome)


ProgressFn = Callable[[CaseEnd], None]


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    status: str
    finished: int
    total: int
    agent_errors: int


def progress_status(outcome: AgentOutcome) -> str:
    """What a progress line can say when a case ends, knowing only its outcome. An agent error
    *is* its verdict (AGENT_ERROR, with the error type and the request's finer cause); any other
    case is judged by the evaluation, so without one (`run --no-report`) the line says it was
    answered and no more — never "ok" for a case that may FAIL. With an evaluation to follow, the
    run command shows the code rungs' verdict instead (`evaluate.code_rungs`)."""
    if outcome.status != "error":
        return f"answered in {outcome.steps} step(s); verdict after evaluation"
    finer = outcome.endpoint_error
    cause = f" ({finer})" if finer and finer != outcome.error_type else ""
    return f"AGENT_ERROR {outcome.error_type}{cause}"
