"""What `run` and `baseline init` are asked, what they answer, and how a caller follows a run.

One request for both kinds of run: the built-in loop against a model (`workflows.run`) and the
team's own agent under test (`workflows.agent_run`, when `agent` or `agent_cmd` is given, or when
`resume` names such a run). The workflow decides which from the request and the store, so the
command line builds one request and calls one workflow.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Protocol

from traceladder.errors import UserError
from traceladder.evaluate.code_rungs import CodeRungVerdicts
from traceladder.evaluate.judge.choice import JudgeRequest
from traceladder.evaluate.passes import EvaluationSummary
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.produce.agent.client import ModelChoice
from traceladder.produce.agent.config import DEFAULT_MAX_TOKENS
from traceladder.produce.agent.run_types import CaseEnd, RunSummary
from traceladder.report.documents import ReportV1


@dataclass(frozen=True)
class RunRequest:
    """What `run` (and each run of `baseline init`) is asked for. `domain`, `model`, `base_url`
    and `seed` are None when not given (the defaults, the environment, or a resumed run's own
    apply); `evaluate` False is --no-report (no judge, no report); `ladder` the rungs to climb.
    `agent` (MODULE:FUNCTION) or `agent_cmd` runs the team's agent instead of the built-in loop;
    the loop's own settings (`max_steps` … `stop_after_errors`) must then stay at their defaults."""

    domain: str | None = None
    model: str | None = None
    base_url: str | None = None
    cases_path: Path | None = None
    system_prompt: Path | None = None
    case_ids: tuple[str, ...] = ()
    dimensions: tuple[str, ...] = ()
    repeat: int | None = None
    concurrency: int = 4
    resume: str | None = None
    seed: int | None = None
    max_steps: int = 8
    timeout_s: float = 120.0
    request_timeout_s: float = 60.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    token_param: str = "auto"
    retry_attempts: int = 4
    retry_base_delay_s: float = 0.5
    stop_after_errors: int = 5
    sim_delay_s: float = 0.0
    user_model: str | None = None  # plays goal cases' users (`produce.agent.user_client`)
    evaluate: bool = True
    ladder: Ladder = field(default_factory=Ladder)
    judge: JudgeRequest = field(default_factory=JudgeRequest)
    agent: str | None = None
    agent_cmd: str | None = None
    agent_version: str | None = None

    @property
    def names_an_agent(self) -> bool:
        return bool(self.agent or self.agent_cmd)


# The built-in loop's settings, with their flags: an agent under test runs its own loop, so one
# set away from its default is refused (it would be silently ignored otherwise).
LOOP_SETTINGS = {
    "max_steps": "--max-steps", "request_timeout_s": "--request-timeout", "max_tokens": "--max-tokens",
    "token_param": "--token-param", "retry_attempts": "--retry-attempts",
    "retry_base_delay_s": "--retry-base-delay", "stop_after_errors": "--stop-after-errors",
}  # fmt: skip
_DEFAULTS = {f.name: f.default for f in fields(RunRequest)}


def refuse_loop_settings(request: RunRequest) -> None:
    """`UserError` naming the first built-in loop setting the request changes."""
    for name, flag in LOOP_SETTINGS.items():
        if getattr(request, name) != _DEFAULTS[name]:
            raise UserError(f"{flag} sets the built-in loop; an agent under test runs its own — drop it")


def require_complete(summary: RunSummary) -> None:
    """`UserError` unless the run completed: no baseline rests on a run that stopped early."""
    if summary.status != "complete":
        raise UserError(
            f"run {summary.run_id} ended {summary.status}; a baseline needs complete runs — finish it "
            f"with `traceladder run --resume {summary.run_id}` or start `baseline init` again"
        )


@dataclass(frozen=True)
class AgentFacts:
    """What a run of an agent under test adds to its result."""

    subject: str  # `agent:MODULE:FUNCTION` / `agent-cmd:CMD`, as `runs.model` records it
    version: str
    dropped_spans: int  # spans the agent emitted that named no case of the run
    refused_bodies: int  # OTLP bodies the run's receiver refused as not OTLP


@dataclass(frozen=True)
class RunResult:
    """What a run did: its summary; with an evaluation, what it judged, the report and where its
    JSON copy was saved. `nothing_measured` says why the run is not a result (every case of a
    real model's run ended as AGENT_ERROR), else None. `agent`: set for an agent under test."""

    summary: RunSummary
    evaluation: EvaluationSummary | None = None
    report: ReportV1 | None = None
    report_path: Path | None = None
    nothing_measured: str | None = None
    agent: AgentFacts | None = None


@dataclass(frozen=True)
class RunOutline:
    """What a caller following a run knows of it before its first case: the model a terminal bar
    names, whether rung 5 follows the code rungs, and `defaulted` — the model choice to announce
    when nobody chose one (said only once the run really starts: an error stays the only line)."""

    model: str
    judge_after: bool
    defaulted: ModelChoice | None = None


class Progress(Protocol):
    """How the caller follows a run: `start` once it is recorded, then a call per finished case."""

    def start(self, run_id: str, verdicts: CodeRungVerdicts | None) -> None:
        """The run is recorded; `verdicts` settles a finished case's trace by the code rungs (the
        same settlement the evaluation after the run then reuses), None when none follows."""

    def __call__(self, end: CaseEnd) -> None: ...


ProgressFor = Callable[[RunOutline], AbstractContextManager[Progress | None]]


def no_progress(_: RunOutline) -> AbstractContextManager[Progress | None]:
    return nullcontext(None)
