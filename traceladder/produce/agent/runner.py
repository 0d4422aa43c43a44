"""The suite runner: validate, record the run, run cases concurrently, keep every finished case.

`run_suite` puts the concerns together, each in its own module: which cases (`selection`), the
run's rows (`run_record`), the endpoint check and stop line (`endpoint_stop`), the spans
(`suite_tracing`), the thread pool, breaker and signals (`case_pool`), the values (`run_types`).

Each finished case is durable on its own: its spans are flushed to the store and its `case_runs`
row committed before the next progress tick. Ctrl-C marks the run `interrupted`; a kill -9 leaves
it `running`, which the next writer to open the store turns into `interrupted` (DuckDB's single
writer lock proves the old process is gone). `--resume RUN_ID` runs only what is missing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from traceladder.produce.agent.breaker import EndpointBreaker
from traceladder.produce.agent.case_pool import CaseDrive, drive_cases
from traceladder.produce.agent.client import ModelChoice, build_client
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.endpoint_stop import check_model_endpoint, stopped_run
from traceladder.produce.agent.loop import AgentOutcome, TokenCap, run_case
from traceladder.produce.agent.run_record import create_suite_run, new_run_id, stored_run
from traceladder.produce.agent.run_types import CaseEnd, ProgressFn, RunOptions, RunSummary
from traceladder.produce.agent.selection import new_selection, resumed_selection
from traceladder.produce.agent.suite_tracing import SuiteTracing
from traceladder.produce.agent.user_client import run_user_model
from traceladder.store.db import Store
from traceladder.store.runs import mark_running
from traceladder.suite.cases.hashes import input_hashes
from traceladder.suite.cases.loader import suite_path
from traceladder.suite.cases.model import Case
from traceladder.suite.cases.validator import read_valid_suite
from traceladder.suite.domain.base import Domain

# What callers of the runner use, from the modules that now hold them.
__all__ = ["CaseEnd", "ProgressFn", "RunOptions", "RunSummary", "run_suite", "stored_run"]


def run_suite(
    store: Store,
    choice: ModelChoice,
    config: AgentConfig,
    options: RunOptions,
    *,
    domain: Domain,
    progress: ProgressFn | None = None,
    on_start: Callable[[str], None] | None = None,
    id_generator: IdGenerator | None = None,
    extra_exporters: tuple[SpanExporter, ...] = (),
) -> RunSummary:
    """Run (or resume) a suite into the store. Case FAIL and agent errors are outcomes, not
    exceptions; a `UserError` means nothing was run. A real endpoint is checked first
    (`endpoints.probe`: `EndpointUnusable`, nothing written); during the run the breaker
    (`produce.agent.breaker`) stops it with `EndpointUnusable`, keeping every case recorded before.
    `on_start(run_id)` is called once the suite is validated, the endpoint checked and the run
    recorded, before the first case."""
    suite = options.suite or read_valid_suite(suite_path(domain, options.cases_path), domain)
    cases = suite.cases  # validated before any model request
    hashes = input_hashes(suite.data, domain, config.identity())
    run_id, selected, repeat = _selection(store, options, choice.model, hashes, cases, domain)
    user_url = options.user_base_url or choice.base_url
    user_model = run_user_model(options.user_model, user_url, config, selected, domain)
    client_factory, endpoint, sim = build_client(
        choice, config, cases, domain, sim_delay_s=options.sim_delay_s
    )
    if sim is None:  # a simulated model has no network to check
        check_model_endpoint(choice, client_factory, config)
    if options.resume:
        mark_running(store, run_id)
    else:
        create_suite_run(store, run_id, choice, config, hashes, suite.path, selected, repeat, domain)
    tracing = SuiteTracing(store, run_id, id_generator=id_generator, extra_exporters=extra_exporters)
    token_cap = TokenCap(config.max_tokens, config.token_param, endpoint.host)

    def execute(case: Case, repeat_index: int, stop: threading.Event) -> AgentOutcome:
        sandbox = domain.new_sandbox()
        return run_case(
            case, domain=domain, sandbox=sim.sandbox(case.id, sandbox) if sim else sandbox,
            client_factory=client_factory, config=config, endpoint=endpoint, tracer=tracing.tracer,
            run_id=run_id, repeat_index=repeat_index, stop=stop, token_cap=token_cap, user_model=user_model,
        )  # fmt: skip

    return drive_cases(
        store, CaseDrive(
            run_id, selected, repeat, execute, tracing.flush, tracing.close,
            label=sim.label if sim else (lambda _: None),
            # The simulator has no endpoint to break: its API errors are injected, labelled faults.
            breaker=EndpointBreaker(options.stop_after_errors, enabled=sim is None),
            stopped=lambda trip, kept: stopped_run(trip, choice, run_id, kept),
            concurrency=options.concurrency,
        ),
        progress=progress, on_start=on_start,
    )  # fmt: skip


def _selection(
    store: Store, options: RunOptions, model: str, hashes: dict[str, str], cases: Sequence[Case],
    domain: Domain,
) -> tuple[str, list[Case], int]:  # fmt: skip
    """The run's id, cases and repeat count: the rest of the run to resume, or a new run's."""
    if options.resume:
        selected, repeat = resumed_selection(store, options.resume, model, hashes, cases)
        return options.resume, selected, repeat
    selected, repeat = new_selection(cases, options, domain)
    return new_run_id(), selected, repeat
