"""The suite runner: validate, record the run, run cases concurrently, keep every finished case.

Each finished case is durable on its own: its spans are flushed to the store and its `case_runs`
row committed before the next progress tick. Ctrl-C marks the run `interrupted`; a kill -9 leaves
it `running`, which the next writer to open the store turns into `interrupted` (DuckDB's single
writer lock proves the old process is gone). `--resume RUN_ID` runs only what is missing.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from traceladder.agent.breaker import DEFAULT_LIMIT, EndpointBreaker, Trip
from traceladder.agent.client import ModelChoice, build_client, endpoint_for
from traceladder.agent.config import AgentConfig
from traceladder.agent.loop import AgentOutcome, TokenCap, run_case
from traceladder.agent.user_client import run_user_model
from traceladder.cases.hashes import input_hashes
from traceladder.cases.loader import suite_path
from traceladder.cases.model import Case
from traceladder.cases.validator import ValidSuite, read_valid_suite
from traceladder.domain.base import Domain
from traceladder.endpoints.probe import EndpointUnusable, check_endpoint, describe
from traceladder.errors import ExitCode, Interrupted, StoreError, UserError, first_line
from traceladder.instrumentation.tracing import TRACER_NAME, make_tracer_provider
from traceladder.storage.db import ACTIVE_RUNS, Store
from traceladder.storage.exporter import DuckDBSpanExporter
from traceladder.storage.runs import (
    NewRun,
    PlayedTurn,
    case_run_statuses,
    create_run,
    mark_finished,
    mark_running,
    record_case_run,
    recorded_config,
    resume_facts,
)

# A run's `model` names its subject: a model, or (agent under test) one of these prefixes.
AGENT_SUBJECT_PREFIXES = ("agent:", "agent-cmd:")
MAX_CASE_RUNS = 100_000  # a bigger selection × --repeat is a typo, not an evaluation


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
    user_model: str | None = None  # plays goal cases' users (`agent.user_client`)
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


def select_cases(
    cases: Sequence[Case], case_ids: Sequence[str], dimensions: Sequence[str], known_dimensions: Sequence[str]
) -> list[Case]:
    known = {c.id for c in cases}
    unknown = [cid for cid in case_ids if cid not in known]
    if unknown:
        raise UserError(f"unknown case {', '.join(unknown)}; list ids with `traceladder cases coverage`")
    bad_dims = [d for d in dimensions if d not in known_dimensions]
    if bad_dims:
        raise UserError(f"unknown dimension {', '.join(bad_dims)}; use {', '.join(known_dimensions)}")
    return [
        c for c in cases
        if (not case_ids or c.id in case_ids) and (not dimensions or c.dimension in dimensions)
    ]  # fmt: skip


def new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


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
    (`agent.breaker`) stops it with `EndpointUnusable`, keeping every case recorded before.
    `on_start(run_id)` is called once the suite is validated, the endpoint checked and the run
    recorded, before the first case."""
    suite = options.suite or read_valid_suite(suite_path(domain, options.cases_path), domain)
    path, cases = suite.path, suite.cases  # validated before any model request
    hashes = input_hashes(suite.data, domain, config.identity())
    if options.resume:
        selected, repeat = resumed_selection(store, options.resume, choice.model, hashes, cases)
        run_id = options.resume
    else:
        selected, repeat = new_selection(cases, options, domain)
        run_id = new_run_id()
    user_url = options.user_base_url or choice.base_url
    user_model = run_user_model(options.user_model, user_url, config, selected, domain)
    client_factory, endpoint, sim = build_client(
        choice, config, cases, domain, sim_delay_s=options.sim_delay_s
    )
    if sim is None:  # a simulated model has no network to check
        _check(choice, client_factory, config)
    if options.resume:
        mark_running(store, run_id)
    else:
        _create_run(store, run_id, choice, config, hashes, path, selected, repeat, domain)
    exporter = DuckDBSpanExporter(store)
    provider = make_tracer_provider(exporter, id_generator=id_generator, extra_exporters=extra_exporters)
    tracer = provider.get_tracer(TRACER_NAME)
    token_cap = TokenCap(config.max_tokens, config.token_param, endpoint.host)

    def execute(case: Case, repeat_index: int, stop: threading.Event) -> AgentOutcome:
        sandbox = domain.new_sandbox()
        return run_case(
            case, domain=domain, sandbox=sim.sandbox(case.id, sandbox) if sim else sandbox,
            client_factory=client_factory, config=config, endpoint=endpoint, tracer=tracer, run_id=run_id,
            repeat_index=repeat_index, stop=stop, token_cap=token_cap, user_model=user_model,
        )  # fmt: skip

    def flush() -> None:
        provider.force_flush()  # the case's spans are in the store before its row says "done"
        if exporter.error is not None:
            raise _write_failed(run_id, exporter.error)

    def close() -> None:
        provider.force_flush()
        provider.shutdown()

    return drive_cases(
        store, CaseDrive(
            run_id, selected, repeat, execute, flush, close,
            label=sim.label if sim else (lambda _: None),
            # The simulator has no endpoint to break: its API errors are injected, labelled faults.
            breaker=EndpointBreaker(options.stop_after_errors, enabled=sim is None),
            stopped=lambda trip, kept: _stopped(trip, choice, run_id, kept),
            concurrency=options.concurrency,
        ),
        progress=progress, on_start=on_start,
    )  # fmt: skip


def new_selection(cases: Sequence[Case], options: RunOptions, domain: Domain) -> tuple[list[Case], int]:
    """The cases and repeat count a new run asks for (`UserError` for an unknown id or dimension,
    or more than MAX_CASE_RUNS case runs)."""
    dimensions = tuple(domain.suite.dimensions) if domain.suite else ()
    selected = select_cases(cases, options.case_ids, options.dimensions, dimensions)
    if len(selected) * options.repeat > MAX_CASE_RUNS:
        raise UserError(
            f"{len(selected)} cases × --repeat {options.repeat} is more than {MAX_CASE_RUNS} case runs; "
            "lower --repeat or select fewer cases"
        )
    return selected, options.repeat


def resumed_selection(
    store: Store, run_id: str, model: str, hashes: dict[str, str], cases: Sequence[Case]
) -> tuple[list[Case], int]:
    """The cases and repeat count of a run to resume, if it may be resumed with this model (or
    agent) and these inputs (writes nothing)."""
    _, selection = _resumable(store, run_id, model, hashes)
    return [c for c in cases if c.id in selection["case_ids"]], int(selection["repeat"])


# Runs one case to its end and returns its outcome (never raises for the case's own failure);
# the event is set when the run stops, and the case then ends as `interrupted`.
CaseFn = Callable[[Case, int, threading.Event], AgentOutcome]


@dataclass(frozen=True)
class CaseDrive:
    """What `drive_cases` needs to run a recorded run's cases: who executes a case, how its
    spans are made durable (`flush`, raising `StoreError`) and released at the end (`close`),
    the simulated model's label of a case, the endpoint breaker and the stop message it gives."""

    run_id: str
    selected: Sequence[Case]
    repeat: int
    execute: CaseFn
    flush: Callable[[], None]
    close: Callable[[], None]
    label: Callable[[str], dict[str, Any] | None]
    breaker: EndpointBreaker[tuple[Case, int, AgentOutcome]]
    stopped: Callable[[Trip[tuple[Case, int, AgentOutcome]], int], EndpointUnusable]
    concurrency: int


def drive_cases(
    store: Store,
    drive: CaseDrive,
    *,
    progress: ProgressFn | None = None,
    on_start: Callable[[str], None] | None = None,
) -> RunSummary:
    """Run the cases of a recorded run (created or resumed by the caller) that have no
    `case_runs` row yet, `concurrency` at a time; record each as it finishes; mark the run
    finished. Ctrl-C / SIGTERM stops every case within seconds and raises `Interrupted`; the
    breaker's trip raises what `drive.stopped` makes; a failed store write raises `StoreError` —
    each keeps every case recorded before."""
    run_id = drive.run_id
    ACTIVE_RUNS.add(run_id)
    if on_start:
        on_start(run_id)
    statuses = case_run_statuses(store, run_id)
    done = set(statuses)
    total = len(drive.selected) * drive.repeat
    jobs: Iterator[tuple[Case, int]] = (
        (c, k) for k in range(drive.repeat) for c in drive.selected if (c.id, k) not in done
    )
    stop = threading.Event()
    finished = resumed = len(done)
    counts = {"recorded": len(done), "errors": sum(s == "error" for s in statuses.values())}
    breaker = drive.breaker
    in_order = threading.Lock()  # the breaker sees cases in the order they finish

    def one(case: Case, repeat_index: int) -> tuple[AgentOutcome, Trip[_Finished] | None]:
        outcome = drive.execute(case, repeat_index, stop)
        if outcome.interrupted:
            return outcome, None  # abandoned: not finished, so not recorded; --resume runs it again
        drive.flush()
        # Recorded here, in the worker, as before: Ctrl-C reaches the main thread, which then
        # never sits inside a store write it would cut short.
        with in_order:
            now, trip = breaker.observe((case, repeat_index, outcome), outcome.endpoint_error)
            record(now)
        return outcome, trip

    def record(items: Sequence[_Finished]) -> None:
        for case, repeat_index, outcome in items:
            try:
                _record_case(store, run_id, case, repeat_index, outcome, drive.label(case.id))
            except Exception as exc:
                raise _write_failed(run_id, exc) from None
            counts["recorded"] += 1
            counts["errors"] += outcome.status == "error"

    def release() -> None:
        with in_order:
            record(breaker.release())

    status = "complete"
    concurrency = max(1, drive.concurrency)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="case")
    pending: dict[Future[tuple[AgentOutcome, Trip[_Finished] | None]], tuple[Case, int]] = {}

    def refill() -> None:
        # Submit lazily: a huge --repeat never materialises millions of futures.
        for case, k in jobs:
            pending[pool.submit(one, case, k)] = (case, k)
            if len(pending) >= 2 * concurrency:
                return

    try:
        refill()
        while pending:
            ready, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in ready:
                case, k = pending.pop(future)
                outcome, trip = future.result()
                finished += 1
                if progress:
                    progress(CaseEnd(finished, total, resumed, case.id, k, outcome))
                if trip is not None:
                    raise drive.stopped(trip, counts["recorded"])
            refill()
        pool.submit(release).result()  # in a worker too: the main thread only waits
    except EndpointUnusable:  # the breaker: stop every case now, keep what was recorded
        status = "interrupted"
        stop.set()
        raise
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: stop every case now, keep the finished
        status = "interrupted"
        stop.set()
        code = exc.exit_code if isinstance(exc, Interrupted) else ExitCode.INTERRUPTED
        raise Interrupted(
            f"interrupted; {counts['recorded']} finished case(s) are kept — resume with "
            f"`traceladder run --resume {run_id}`",
            code,
        ) from None
    except BaseException:  # a failed store write: stop every case now
        status = "interrupted"
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # stopped cases return within ~0.1 s
        drive.close()
        ACTIVE_RUNS.discard(run_id)
        # If this fails too (the disk is still full), the next writer marks the run interrupted.
        with contextlib.suppress(Exception):
            mark_finished(store, run_id, status)
    return RunSummary(run_id, status, counts["recorded"], total, counts["errors"])


_Finished = tuple[Case, int, AgentOutcome]


def progress_status(outcome: AgentOutcome) -> str:
    """What a progress line can say when a case ends, knowing only its outcome. An agent error
    *is* its verdict (AGENT_ERROR, with the error type and the request's finer cause); any other
    case is judged by the evaluation, so without one (`run --no-report`) the line says it was
    answered and no more — never "ok" for a case that may FAIL. With an evaluation to follow, the
    run command shows the code rungs' verdict instead (`evaluation.code_rungs`)."""
    if outcome.status != "error":
        return f"answered in {outcome.steps} step(s); verdict after evaluation"
    finer = outcome.endpoint_error
    cause = f" ({finer})" if finer and finer != outcome.error_type else ""
    return f"AGENT_ERROR {outcome.error_type}{cause}"


def _check(choice: ModelChoice, client_factory: Callable[[], Any], config: AgentConfig) -> None:
    """The endpoint check before any case: one `GET /models` (`endpoints.probe`)."""
    client = client_factory()
    try:
        check_endpoint(
            client, what="the model endpoint", url=choice.shown_url, key_note=_key_note(choice),
            timeout_s=min(config.request_timeout_s, 30.0),
        )  # fmt: skip
    finally:
        client.close()


def _key_note(choice: ModelChoice) -> str:
    if choice.key_source:
        return f"the key came from {choice.key_source}"
    return "no API key was sent to this host (set OPENAI_API_KEY for it)"


def _stopped(trip: Trip[_Finished], choice: ModelChoice, run_id: str, kept: int) -> EndpointUnusable:
    """The one line a stopped run ends with: the cause, what is kept, how to go on."""
    message = trip.dropped[-1][2].error_message or ""
    # A connection error's message ends with its cause in parentheses (`agent.retry`).
    connection = trip.error_type == "connection" and message.endswith(")")
    cause = message.rsplit("(", 1)[-1][:-1] if connection else None
    reason = describe(
        "the model endpoint", choice.shown_url, trip.error_type, cause, _key_note(choice), model=choice.model
    )
    when = (
        "before any case worked"
        if trip.decisive
        else f"after {trip.streak} cases in a row ended with {trip.error_type}"
    )
    return EndpointUnusable(
        f"run stopped {when}: {reason}; {kept} finished case(s) kept, {len(trip.dropped)} not — fix "
        f"the endpoint, then `traceladder run --resume {run_id}`"
    )


def _write_failed(run_id: str, exc: BaseException) -> StoreError:
    return StoreError(
        f"could not write to the store ({first_line(exc)}); every finished case is kept — "
        f"fix the cause, then `traceladder run --resume {run_id}`"
    )


def stored_run(store: Store, run_id: str) -> tuple[dict[str, Any], str | None] | None:
    """The configuration a run recorded (`AgentConfig.recorded()`) and its domain, or None for
    no such run."""
    return recorded_config(store, run_id)


def _create_run(
    store: Store, run_id: str, choice: ModelChoice, config: AgentConfig, hashes: dict[str, str],
    suite: Path, selected: list[Case], repeat: int, domain: Domain,
) -> None:  # fmt: skip
    endpoint = endpoint_for(choice)
    create_run(store, NewRun(
        run_id, suite.name, domain.name, choice.model, endpoint.provider, endpoint.host, config.recorded(),
        hashes, run_selection([c.id for c in selected], repeat, domain), len(selected) * repeat,
    ))  # fmt: skip


def run_selection(case_ids: Sequence[str], repeat: int, domain: Domain) -> dict[str, Any]:
    """What a new run records as its selection: the case ids, the repeat count, and the names its
    suite gives its dimensions (`D1` → "tool selection" in the shipped suite, "when to call" in a
    recorded one), so a report names them even where the domain cannot be loaded again."""
    names = dict(domain.suite.dimensions) if domain.suite else {}
    return {"case_ids": list(case_ids), "repeat": repeat, "dimension_names": names}


def _resumable(store: Store, run_id: str, model: str, hashes: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """The run's selection, if it may be resumed with this model and these inputs (writes nothing)."""
    facts = resume_facts(store, run_id)
    if facts is None:
        raise UserError(f"no run {run_id} in {store.path}; see `traceladder sql 'SELECT * FROM runs'`")
    stored_model, stored, selection, status = facts
    if status == "complete":
        raise UserError(f"run {run_id} is already complete; nothing to resume")
    if stored_model != model:
        if stored_model.startswith(AGENT_SUBJECT_PREFIXES):
            raise UserError(
                f"run {run_id} ran {stored_model!r}; resume it with `traceladder run --resume {run_id}`"
            )
        raise UserError(f"run {run_id} used model {stored_model!r}; resume it with --model {stored_model}")
    changed = [k for k in stored if stored[k] != hashes.get(k) and k != "inputs"]
    if changed:
        raise UserError(f"cannot resume {run_id}: inputs changed since it started ({', '.join(changed)})")
    return run_id, selection


def _record_case(
    store: Store,
    run_id: str,
    case: Case,
    repeat_index: int,
    outcome: AgentOutcome,
    label: dict[str, Any] | None,
) -> None:
    row = [
        run_id, case.id, repeat_index, outcome.trace_id or None, case.dimension, outcome.status,
        outcome.error_type, outcome.error_message, outcome.steps, outcome.final_text,
        outcome.latency_ms, outcome.input_tokens, outcome.output_tokens,
        json.dumps(label) if label else None, datetime.now(UTC).replace(tzinfo=None),
    ]  # fmt: skip
    turns = [
        PlayedTurn(
            index,
            t.trace_id,
            t.status,
            t.error_type,
            t.error_message,
            t.steps,
            t.final_text,
            t.latency_ms,
            t.input_tokens,
            t.output_tokens,
        )  # fmt: skip
        for index, t in enumerate(outcome.turns)
    ]
    record_case_run(store, row, turns)
