"""The `run` workflow: run the suite into the store, then evaluate and report.

`run(store, RunRequest, progress_for=…)` → `RunResult`. A request naming an agent under test
(or resuming a run of one) is the agent's workflow (`workflows.agent_run`); otherwise the built-in
loop runs against a model. The loop's set-up — the model, its configuration (or a resumed run's
own), the domain, the judge, the suite read and validated once — is `prepare_run`, shared with
`baseline init` (`baseline_run`, run i of a baseline), so a bad flag fails before anything runs
and both commands run with exactly the same configuration. The caller sees the run go through
`progress_for(outline)`, a context manager giving a `Progress` (the CLI's progress line); this
module prints nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from traceladder.errors import UserError
from traceladder.evaluate import evaluate_store
from traceladder.evaluate.code_rungs import CodeRungVerdicts
from traceladder.evaluate.judge.choice import resolve_judge
from traceladder.evaluate.judge.phase import JudgeOptions
from traceladder.evaluate.passes import EvaluationSummary
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.produce.agent.client import ModelChoice, choose_model
from traceladder.produce.agent.config import AgentConfig, RetryPolicy, redact_url
from traceladder.produce.agent.runner import RunOptions, RunSummary, run_suite, stored_run
from traceladder.produce.agent.sim import is_sim
from traceladder.store.db import Store
from traceladder.store.results import ResultTables
from traceladder.store.runs import commonest_error
from traceladder.suite.cases.loader import suite_path
from traceladder.suite.cases.validator import ValidSuite, read_valid_suite
from traceladder.suite.domain.base import Domain
from traceladder.suite.domain.registry import DEFAULT_DOMAIN, load_domain, with_system_prompt
from traceladder.workflows.agent_run import recorded_agent_model, run_agent
from traceladder.workflows.report_files import load_report, save_json_report
from traceladder.workflows.run_request import (
    ProgressFor,
    RunOutline,
    RunRequest,
    RunResult,
    no_progress,
    require_complete,
)

# What chooses what a new run does, with its flag; --resume continues a run exactly as it started.
_SELECTION = (
    ("case_ids", "--case"), ("dimensions", "--dimension"), ("repeat", "--repeat"), ("seed", "--seed"),
    ("cases_path", "--cases"), ("domain", "--domain"), ("system_prompt", "--system_prompt"),
)  # fmt: skip


@dataclass(frozen=True)
class PreparedRun:
    """A request resolved: everything a run needs, checked before the first case."""

    choice: ModelChoice
    config: AgentConfig
    domain: Domain
    suite: ValidSuite
    options: RunOptions
    ladder: Ladder
    judge: JudgeOptions | None
    evaluate: bool
    cases_path: Path | None

    @property
    def simulated(self) -> bool:
        return is_sim(self.choice.model)

    def outline(self) -> RunOutline:
        defaulted = self.choice if self.choice.defaulted else None
        return RunOutline(self.choice.model, self.judge is not None, defaulted)


def prepare_run(store: Store, request: RunRequest) -> PreparedRun:
    """Resolve a request once: the model and configuration (a resumed run's own, flags that would
    change them refused), the domain with its system prompt, the judge (the default depends on
    whether the model is simulated), the suite read and validated. `UserError` for anything
    wrong, before any case runs."""
    if request.resume:
        choice, config, domain = _resumed(store, request)
    else:
        domain = with_system_prompt(load_domain(request.domain or DEFAULT_DOMAIN), request.system_prompt)
        choice = choose_model(request.model, request.base_url)
        config = _config(request, choice.model, choice.base_url)
    if request.resume and config.user_model and request.user_model not in (None, config.user_model):
        raise UserError(
            f"run {request.resume} used --user-model {config.user_model}; drop --user-model or pass that one"
        )
    user_model = config.user_model or request.user_model  # a run recorded before it was kept takes the flag
    judge = resolve_judge(request.judge, simulated=is_sim(choice.model)) if request.evaluate else None
    # Read and validated once: the runner, the progress line and the evaluation take these cases.
    suite = read_valid_suite(suite_path(domain, request.cases_path), domain)
    options = RunOptions(
        case_ids=request.case_ids, dimensions=request.dimensions, repeat=request.repeat or 1,
        concurrency=request.concurrency, resume=request.resume, cases_path=request.cases_path, suite=suite,
        sim_delay_s=request.sim_delay_s, stop_after_errors=request.stop_after_errors,
        user_model=user_model, user_base_url=request.base_url,
    )  # fmt: skip
    return PreparedRun(
        choice, config, domain, suite, options, request.ladder, judge, request.evaluate, request.cases_path
    )


def run(store: Store, request: RunRequest, *, progress_for: ProgressFor = no_progress) -> RunResult:
    """Run (or resume) the suite the request names, then, unless `request.evaluate` is False,
    evaluate it and save its JSON report beside the store. The team's agent runs it when the
    request names one or resumes a run of one; else the built-in loop against the model."""
    if runs_an_agent(store, request):
        return run_agent(store, request, progress_for=progress_for)
    prepared = prepare_run(store, request)
    summary, settled = _drive(store, prepared, prepared.config, progress_for)
    result = RunResult(summary, nothing_measured=_nothing_measured(store, prepared, summary))
    if not prepared.evaluate:
        return result
    evaluation = _evaluate(store, prepared, summary.run_id, settled)
    report = load_report(store, summary.run_id)
    return replace(
        result, evaluation=evaluation, report=report, report_path=save_json_report(report, store.path)
    )


def runs_an_agent(store: Store, request: RunRequest) -> bool:
    """Whether the request is for the agent under test: it names one, or resumes a run of one."""
    if request.names_an_agent:
        return True
    return bool(request.resume) and recorded_agent_model(store, str(request.resume)) is not None


def baseline_run(store: Store, prepared: PreparedRun, i: int, *, progress_for: ProgressFor) -> RunResult:
    """Run i of `baseline init`: run and evaluate as `run` does; sim:faulty uses seed SEED + i
    (the simulator's stand-in for a real model's sampling noise). A run that did not complete, or
    measured nothing, is a `UserError`: no baseline rests on it. No report file is written."""
    config = prepared.config
    if config.sim_seed is not None:
        config = replace(config, sim_seed=config.sim_seed + i)
    summary, settled = _drive(store, prepared, config, progress_for)
    require_complete(summary)
    nothing = _nothing_measured(store, prepared, summary)
    if nothing:
        raise UserError(nothing)
    return RunResult(summary, evaluation=_evaluate(store, prepared, summary.run_id, settled))


def _drive(
    store: Store, prepared: PreparedRun, config: AgentConfig, progress_for: ProgressFor
) -> tuple[RunSummary, ResultTables | None]:
    """Run the prepared suite; with an evaluation to follow, each finished case is settled by
    the code rungs once, for the progress line, and those tables returned for the evaluation."""
    shared: list[CodeRungVerdicts] = []
    with progress_for(prepared.outline()) as progress:

        def started(run_id: str) -> None:
            verdicts = None
            if prepared.evaluate:
                tag = prepared.judge.tag if prepared.judge is not None else None
                verdicts = CodeRungVerdicts(
                    store, run_id, domain=prepared.domain.name, cases_path=prepared.cases_path,
                    cases=prepared.suite.cases, ladder=prepared.ladder, judge_tag=tag,
                )  # fmt: skip
                shared.append(verdicts)
            if progress is not None:
                progress.start(run_id, verdicts)

        summary = run_suite(
            store, prepared.choice, config, prepared.options, domain=prepared.domain,
            progress=progress, on_start=started,
        )  # fmt: skip
    return summary, (shared[0].settled() if shared else None)


def _evaluate(
    store: Store, prepared: PreparedRun, run_id: str, settled: ResultTables | None
) -> EvaluationSummary:
    return evaluate_store(
        store, run_id=run_id, domain=prepared.domain.name, cases_path=prepared.cases_path,
        cases=prepared.suite.cases, ladder=prepared.ladder, judge=prepared.judge, settled=settled,
    )  # fmt: skip


def _config(request: RunRequest, model: str, base_url: str | None) -> AgentConfig:
    return AgentConfig(
        model=model,
        base_url=base_url,
        max_steps=request.max_steps,
        case_timeout_s=request.timeout_s,
        request_timeout_s=request.request_timeout_s,
        max_tokens=request.max_tokens,
        token_param=request.token_param,
        retry=RetryPolicy(max_attempts=request.retry_attempts, base_delay_s=request.retry_base_delay_s),
        sim_seed=_seed(request) if model.startswith("sim:faulty") else None,
        user_model=request.user_model,
    )


def _seed(request: RunRequest) -> int:
    if request.seed is not None:
        return int(request.seed)
    raw = os.environ.get("TRACELADDER_SIM_SEED", "0")
    try:
        return int(raw)
    except ValueError:
        raise UserError(f"TRACELADDER_SIM_SEED must be an integer, got {raw!r}") from None


def _resumed(store: Store, request: RunRequest) -> tuple[ModelChoice, AgentConfig, Domain]:
    """The model and configuration a run started with. Flags that would change them are refused,
    not ignored; --base-url is taken (the stored one has its credentials redacted) but must be
    the same endpoint."""
    resume = request.resume
    given = [flag for name, flag in _SELECTION if getattr(request, name) not in (None, ())]
    if given:
        raise UserError(f"--resume continues {resume} with its own selection; drop {', '.join(given)}")
    stored = stored_run(store, str(resume))
    if stored is None:
        raise UserError(f"no run {resume} in {store.path}; see `traceladder sql 'SELECT * FROM runs'`")
    raw, domain = stored
    if request.model and request.model != raw["model"]:
        raise UserError(f"run {resume} used model {raw['model']!r}; drop --model or pass that one")
    stored_url = raw.get("base_url")
    url = request.base_url or (stored_url and os.environ.get("OPENAI_BASE_URL")) or stored_url
    if url != stored_url and redact_url(url) != stored_url:
        raise UserError(f"--base-url is not the endpoint run {resume} used ({stored_url})")
    if raw.pop("base_url_redacted", False) and url == stored_url:
        raise UserError(f"run {resume} used a base URL with credentials; pass it again with --base-url")
    raw["retry"] = RetryPolicy(**raw["retry"])
    config = AgentConfig(**dict(raw, base_url=url))
    return choose_model(config.model, url), config, load_domain(domain or DEFAULT_DOMAIN)


def _nothing_measured(store: Store, prepared: PreparedRun, summary: RunSummary) -> str | None:
    """Every case of the run ended as AGENT_ERROR: no verdict measured the model, so the run is
    not a result (exit 2), whatever a gate later says about its accuracy. A simulated model's
    AGENT_ERRORs are injected, labelled faults, not a misconfiguration."""
    if not summary.finished or summary.agent_errors != summary.finished or prepared.simulated:
        return None
    commonest = commonest_error(store, summary.run_id)
    common = f"; most often {commonest[0]} ({commonest[1]} of {summary.finished})" if commonest else ""
    return (
        f"every case of run {summary.run_id} ended as AGENT_ERROR, so nothing was measured{common} — "
        f'see `traceladder sql "SELECT case_id, error_type, error_message FROM case_runs WHERE run_id = '
        f"'{summary.run_id}'\"`"
    )
