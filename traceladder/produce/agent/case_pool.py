"""The case pool: a recorded run's remaining cases, `concurrency` at a time in threads, each
recorded as it finishes (spans flushed first), the endpoint breaker watching them in the order
they finish, Ctrl-C / SIGTERM stopping every case within seconds, the run marked finished."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from traceladder.endpoints.probe import EndpointUnusable
from traceladder.errors import ExitCode, Interrupted
from traceladder.produce.agent.breaker import EndpointBreaker, Trip
from traceladder.produce.agent.loop import AgentOutcome
from traceladder.produce.agent.run_record import record_case, write_failed
from traceladder.produce.agent.run_types import CaseEnd, ProgressFn, RunSummary
from traceladder.store.db import ACTIVE_RUNS, Store
from traceladder.store.runs import case_run_statuses, mark_finished
from traceladder.suite.cases.model import Case

_Finished = tuple[Case, int, AgentOutcome]


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
                record_case(store, run_id, case, repeat_index, outcome, drive.label(case.id))
            except Exception as exc:
                raise write_failed(run_id, exc) from None
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
