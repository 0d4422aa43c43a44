"""The agent-under-test workflow: run the team's own agent on a suite, record it as a run, judge it.

`run_agent(store, RunRequest)` → `RunResult` (with its `agent` facts); `workflows.run.run` calls it
for a request naming an agent (`agent` / `agent_cmd`) or resuming a run of one.

The run is a run like any other: its subject (`agent:MODULE:FUNCTION` / `agent-cmd:CMD`) stands
in `runs.model`, its configuration hash and case hash bind it like a model run's, and its version
is the `agent_version` input — so `report`, `consistency`, `baseline lock`, `gate` and `compare`
treat it unchanged, and `compare` names the version when two runs differ in it. Cases run through
the runner's case pool (`produce.agent.case_pool.drive_cases`): concurrency, Ctrl-C, `--resume` and
`--repeat` behave as for the built-in loop. As in `workflows.run`, each finished case is settled by
the code rungs once (the progress line shows it) and the evaluation after the run reuses that
settlement: each case climbs the ladder once.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from traceladder.endpoints.probe import EndpointUnusable
from traceladder.errors import StoreError, UserError
from traceladder.evaluate import evaluate_store
from traceladder.evaluate.code_rungs import CodeRungVerdicts
from traceladder.evaluate.judge.choice import resolve_judge
from traceladder.evaluate.judge.phase import JudgeOptions
from traceladder.instrumentation.tracing import TRACER_NAME, make_tracer_provider
from traceladder.produce.agent.breaker import EndpointBreaker
from traceladder.produce.agent.case_pool import CaseDrive, drive_cases
from traceladder.produce.agent.client import DEFAULT_MODEL, choose_model
from traceladder.produce.agent.config import AgentConfig, redact_url
from traceladder.produce.agent.run_record import new_run_id, run_selection
from traceladder.produce.agent.run_types import ProgressFn, RunOptions, RunSummary
from traceladder.produce.agent.selection import new_selection, resumed_selection
from traceladder.produce.agent.sim import SimModel, SimSpec, is_sim
from traceladder.produce.agent.user_client import run_user_model
from traceladder.produce.subject.attribution import CaseSpanExporter, CaseTraces
from traceladder.produce.subject.case_input import ModelAccess
from traceladder.produce.subject.case_run import CaseSetting, run_agent_case
from traceladder.produce.subject.mcp_tools import mcp_tools
from traceladder.produce.subject.python_agent import load_agent
from traceladder.produce.subject.run_provider import use_for_this_run
from traceladder.produce.subject.run_server import RunServer, serving
from traceladder.produce.subject.spec import COMMAND, PYTHON, AgentSpec, agent_spec
from traceladder.store.db import Store
from traceladder.store.runs import NewRun, create_run, mark_running, recorded_config
from traceladder.suite.cases.hashes import input_hashes
from traceladder.suite.cases.loader import suite_path
from traceladder.suite.cases.model import Case
from traceladder.suite.cases.validator import read_valid_suite
from traceladder.suite.domain.base import Domain
from traceladder.suite.domain.registry import DEFAULT_DOMAIN, load_domain, with_system_prompt
from traceladder.workflows.report_files import load_report, save_json_report
from traceladder.workflows.run_request import (
    AgentFacts,
    ProgressFor,
    RunOutline,
    RunRequest,
    RunResult,
    no_progress,
    refuse_loop_settings,
)

AGENT_VERSION_KEY = "agent_version"  # the input that names the agent's version


@dataclass(frozen=True)
class _Plan:
    spec: AgentSpec
    domain: Domain
    model: str
    base_url: str | None
    api_key: str | None
    timeout_s: float
    seed: int | None
    user_model: str | None = None  # who plays goal cases' users (`--user-model`)

    def identity(self) -> dict[str, Any]:
        """The configuration two runs must share to be comparable (the seed is sampling noise).
        The user model only when there is one, so a run without stays as it was hashed before."""
        return {
            "agent_kind": self.spec.kind, "agent_model": self.model,
            "base_url": redact_url(self.base_url), "case_timeout_s": self.timeout_s,
            **({"user_model": self.user_model} if self.user_model else {}),
        }  # fmt: skip

    def recorded(self) -> dict[str, Any]:
        """`runs.config`: everything a --resume needs (never the key)."""
        return {
            **self.identity(), "agent": self.spec.target, "agent_version": self.spec.version,
            "sim_seed": self.seed,
        }  # fmt: skip


def recorded_agent_model(store: Store, run_id: str) -> str | None:
    """The model the agent of run `run_id` talked to, or None when `run_id` is not a run of an
    agent under test (a `--resume` of one takes this workflow)."""
    stored = recorded_config(store, run_id)
    return str(stored[0]["agent_model"]) if stored is not None and "agent_kind" in stored[0] else None


def run_agent(store: Store, request: RunRequest, *, progress_for: ProgressFor = no_progress) -> RunResult:
    """Run the agent the request names (or the one the resumed run recorded) on the selected
    cases into `store`, then (unless `request.evaluate` is False) judge the run and save its
    JSON report beside the store. `UserError` before anything is recorded for a bad agent, flag
    (a built-in loop setting included) or suite; `Interrupted` / `StoreError` as the runner's.

    The caller follows the run through `progress_for(outline)`: its `start(run_id, verdicts)` is
    called once the run is recorded, `verdicts` (None without an evaluation to follow) settling a
    finished case by the code rungs for the progress line; the evaluation after the run reuses
    what it settled instead of settling those traces again. The judge's default depends on the
    model the agent talks to (a resumed run's: the one it recorded), as for the built-in loop."""
    refuse_loop_settings(request)
    plan = _plan(store, request)
    domain = plan.domain
    judge = resolve_judge(request.judge, simulated=is_sim(plan.model)) if request.evaluate else None
    suite = read_valid_suite(suite_path(domain, request.cases_path), domain)
    hashes = {**input_hashes(suite.data, domain, plan.identity()), AGENT_VERSION_KEY: plan.spec.version}
    if request.resume:
        selected, repeat = resumed_selection(store, request.resume, plan.spec.subject, hashes, suite.cases)
        run_id = request.resume
    else:
        repeat_asked = request.repeat or 1
        options = RunOptions(case_ids=request.case_ids, dimensions=request.dimensions, repeat=repeat_asked)
        selected, repeat = new_selection(suite.cases, options, domain)
        run_id = new_run_id()
    # the user model is reached like the agent's model: `--base-url` as given (for a sim: model too)
    user_config = AgentConfig(plan.model, request_timeout_s=plan.timeout_s)
    # a run recorded before the user model was kept (none in its configuration) takes the flag
    user_model = run_user_model(
        plan.user_model or request.user_model,
        request.base_url or plan.base_url,
        user_config,
        selected,
        domain,
    )
    sim = _sim(plan, suite.cases, domain)
    traces = CaseTraces(run_id)
    exporter = CaseSpanExporter(store, traces)
    provider = make_tracer_provider(exporter)
    agent_fn = None
    if plan.spec.kind == PYTHON:
        # The agent's own instrumentation reaches the run through the global provider; pointed at
        # this run's before its module is imported, so a tracer it takes at import time is ours
        # too — in this run and in the next one of the same process (`baseline init`).
        use_for_this_run(provider)
        agent_fn = load_agent(plan.spec.target)
    elif shutil.which(plan.spec.argv[0]) is None:
        raise UserError(f"--agent-cmd: no program {plan.spec.argv[0]!r} (not found on PATH)")
    if request.resume:
        mark_running(store, run_id)
    else:
        create_run(store, NewRun(
            run_id, suite.path.name, domain.name, plan.spec.subject, "agent", None, plan.recorded(), hashes,
            run_selection([c.id for c in selected], repeat, domain), len(selected) * repeat,
        ))  # fmt: skip
    with serving(store, traces, sim) as server, mcp_tools(domain, server) as mcp_url:
        model = _model_access(plan, server)
        setting = CaseSetting(
            plan.spec,
            domain,
            provider.get_tracer(TRACER_NAME),
            traces,
            server,
            model,
            plan.timeout_s,
            agent_fn,
            mcp_url,
            user_model,
        )
        shared: list[CodeRungVerdicts] = []
        with progress_for(RunOutline(plan.model, judge is not None)) as progress:

            def started(run_id: str) -> None:
                verdicts = _code_rung_verdicts(store, run_id, request, judge, domain, suite.cases)
                if verdicts is not None:
                    shared.append(verdicts)
                if progress is not None:
                    progress.start(run_id, verdicts)

            summary = _drive(
                store, setting, sim, selected, repeat, request, provider, exporter, progress, started
            )
    # Counted when the cases are done: spans after them are not the agent's. An agent that
    # instruments the `openai` module in this process also instruments the judge's calls below,
    # whose spans name no case either; they are still left out, but were counted as the agent's.
    if setting.agent_fn is not None:  # a command agent's provider is shut down (flushed) already
        provider.force_flush()
    dropped = traces.dropped
    evaluation = report = report_path = None
    if request.evaluate:
        evaluation = evaluate_store(
            store, run_id=summary.run_id, domain=domain.name, cases_path=request.cases_path,
            cases=suite.cases, ladder=request.ladder, judge=judge,
            settled=shared[0].settled() if shared else None,
        )  # fmt: skip
        report = load_report(store, summary.run_id)
        report_path = save_json_report(report, store.path)
    facts = AgentFacts(plan.spec.subject, plan.spec.version, dropped, server.refused)
    return RunResult(summary, evaluation, report, report_path, agent=facts)


def _code_rung_verdicts(
    store: Store, run_id: str, request: RunRequest, judge: JudgeOptions | None, domain: Domain,
    cases: Sequence[Case],
) -> CodeRungVerdicts | None:  # fmt: skip
    """The run's one settlement by the code rungs, as the evaluation after it would settle (its
    ladder, its judge tag): None when no evaluation follows."""
    if not request.evaluate:
        return None
    tag = judge.tag if judge is not None else None
    return CodeRungVerdicts(
        store, run_id, domain=domain.name, cases_path=request.cases_path, cases=cases,
        ladder=request.ladder, judge_tag=tag,
    )  # fmt: skip


def _drive(
    store: Store, setting: CaseSetting, sim: SimModel | None, selected: list[Case], repeat: int,
    request: RunRequest, provider: Any, exporter: CaseSpanExporter, progress: ProgressFn | None,
    on_start: Callable[[str], None] | None,
) -> RunSummary:  # fmt: skip
    run_id = setting.traces.run_id

    def execute(case: Case, repeat_index: int, stop: Any) -> Any:
        sandbox = setting.domain.new_sandbox()
        if sim is not None:
            sandbox = sim.sandbox(case.id, sandbox)
        return run_agent_case(setting, case, sandbox, repeat_index, stop)

    def flush() -> None:
        provider.force_flush()  # the case's spans are in the store before its row says "done"
        error = exporter.error or setting.server.write_error
        if error is not None:
            raise StoreError(
                f"could not write to the store ({error}); every finished case is kept — "
                f"fix the cause, then `traceladder run --resume {run_id}`"
            )

    def close() -> None:
        provider.force_flush()
        if setting.agent_fn is None:
            provider.shutdown()  # the global provider of a Python agent lives as long as the process

    def never(trip: Any, kept: int) -> EndpointUnusable:  # the breaker is off: no endpoint of ours
        raise AssertionError("the agent run's breaker never trips")

    return drive_cases(
        store, CaseDrive(
            run_id, selected, repeat, execute, flush, close,
            label=sim.label if sim else (lambda _: None),
            breaker=EndpointBreaker(0, enabled=False), stopped=never, concurrency=request.concurrency,
        ),
        progress=progress, on_start=on_start,
    )  # fmt: skip


def _plan(store: Store, request: RunRequest) -> _Plan:
    """The agent, domain, model and timeout the request asks for — or, for a --resume, those the
    run recorded (flags that would change them refused, not ignored)."""
    if request.resume:
        return _resumed_plan(store, request)
    spec = agent_spec(request.agent, request.agent_cmd, request.agent_version)
    domain = with_system_prompt(load_domain(request.domain or DEFAULT_DOMAIN), request.system_prompt)
    plan = _model_plan(spec, domain, request.model, request.base_url, request.timeout_s, request.seed)
    return replace(plan, user_model=request.user_model)


def _model_plan(
    spec: AgentSpec,
    domain: Domain,
    model: str | None,
    base_url: str | None,
    timeout_s: float,
    seed: int | None,
) -> _Plan:
    choice = choose_model(model, base_url)
    name = choice.model if not choice.defaulted else DEFAULT_MODEL
    if is_sim(name):
        try:
            SimSpec.parse(name)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return _Plan(
            spec, domain, name, None, None, timeout_s, seed or 0 if name.startswith("sim:faulty") else None
        )
    return _Plan(spec, domain, name, choice.url, choice.api_key, timeout_s, None)


def _resumed_plan(store: Store, request: RunRequest) -> _Plan:
    assert request.resume is not None
    stored = recorded_config(store, request.resume)
    if stored is None:
        raise UserError(
            f"no run {request.resume} in {store.path}; see `traceladder sql 'SELECT * FROM runs'`"
        )
    raw, domain_name = stored
    given = [
        flag
        for flag, value in (
            ("--agent", request.agent),
            ("--agent-cmd", request.agent_cmd),
            ("--model", request.model),
            ("--case", request.case_ids),
            ("--dimension", request.dimensions),
            ("--cases", request.cases_path),
            ("--system-prompt", request.system_prompt),
            ("--seed", request.seed),
        )
        if value  # fmt: skip
    ]
    if given:
        raise UserError(
            f"--resume continues {request.resume} with its own agent and selection; drop {', '.join(given)}"
        )
    kind, target = raw["agent_kind"], raw["agent"]
    version = request.agent_version or raw["agent_version"]
    spec = AgentSpec(kind, target, version)
    if request.agent_version is None:  # the agent's version now, so a changed agent is refused
        fresh = agent_spec(target if kind == PYTHON else None, target if kind == COMMAND else None, None)
        spec = replace(spec, version=fresh.version)
    domain = load_domain(domain_name or request.domain or DEFAULT_DOMAIN)
    recorded_user = raw.get("user_model")
    if recorded_user and request.user_model not in (None, recorded_user):
        raise UserError(
            f"run {request.resume} used --user-model {recorded_user}; drop --user-model or pass that one"
        )
    plan = _model_plan(
        spec, domain, raw["agent_model"], raw.get("base_url"), raw["case_timeout_s"], raw.get("sim_seed")
    )
    return replace(plan, user_model=recorded_user)


def _sim(plan: _Plan, cases: Sequence[Case], domain: Domain) -> SimModel | None:
    if not is_sim(plan.model):
        return None
    return SimModel(SimSpec.parse(plan.model), cases, domain, seed=plan.seed or 0)


def _model_access(plan: _Plan, server: RunServer) -> ModelAccess:
    if is_sim(plan.model):
        return ModelAccess(plan.model, f"{server.url}/v1", "sim")
    return ModelAccess(plan.model, plan.base_url, plan.api_key)
