"""`traceladder watch`: judge live traces as they complete, next to `serve`, on the same store.

A trace is complete when its root span has arrived (spans are exported when they end, so the root
has ended) and nothing of it arrived for `settle_s`; a trace whose root never comes (a parent
outside the sampled set, a crashed process) is complete after `orphan_after_s`. A span arriving
later bumps the trace's arrival number (`traces.seq`), which makes the trace due again, and its
new result replaces the old one.

Exactly once: a trace is due when it has no result or its result judged an older arrival
(`trace_results.judged_seq < traces.seq`). Results and the watermark (`watch_state`) are written in
one transaction, so a watch killed at any moment (kill -9 included) has either recorded a batch
completely or not at all: restarted, it neither judges a trace twice nor skips one.

The store is opened per batch and closed between polls, so `serve` (which folds whenever the
store is free) and other commands keep working. After the first batch, a policy section that
matches no stored trace is warned about once, as `evaluate` does (`evaluate.policy_check`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from traceladder.errors import StoreBusy
from traceladder.evaluate.assemble import NO_LIVE_OPTIONS, LiveOptions
from traceladder.evaluate.conversations import judge_idle
from traceladder.evaluate.judge.phase import JudgeOptions
from traceladder.evaluate.passes import EvaluationSummary, evaluate_store
from traceladder.evaluate.policy_check import warn_unseen_policy_sections
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.store.db import Store, open_store
from traceladder.store.readers import FailedTrace, read_failed_traces
from traceladder.store.watch_state import due_trace_ids, record_watermark

NAMED_PER_BATCH = 50  # failed traces named per batch; more would bury the log (the rest: `sql`)


def _never() -> bool:
    return False


@dataclass(frozen=True)
class WatchOptions:
    """What `watch` is asked to do: when a trace is complete, how often to poll, what judges it;
    `once` stops when nothing is due (cron), `stopping` is asked before each poll (a signal
    handler's flag) and stops the watch after the batch in hand."""

    settle_s: float = 30.0
    orphan_after_s: float | None = None  # default: 10 × settle
    interval_s: float = 2.0
    batch: int = 5_000
    name: str = "default"
    domain: str | None = None
    live: LiveOptions = NO_LIVE_OPTIONS
    workers: int | None = None
    judge: JudgeOptions | None = None  # rung 5 for the traces the code rungs pass
    ladder: Ladder = Ladder()  # the built-in rungs plus the plug-ins named (`evaluate.rungs.ladder`)
    conversation_idle_s: float | None = None  # judge a conversation once idle this long
    once: bool = False
    stopping: Callable[[], bool] = _never


@dataclass(frozen=True)
class WatchBatch:
    """One judged batch: the evaluation's summary and the batch's FAIL and AGENT_ERROR traces."""

    summary: EvaluationSummary
    failed: tuple[FailedTrace, ...]


@dataclass
class WatchProgress:
    batches: int = 0
    judged: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    conversations: int = 0  # conversations of several turns judged (with their turns, or once idle)


def due_traces(store: Store, options: WatchOptions, now: datetime) -> list[str]:
    orphan_after = options.orphan_after_s if options.orphan_after_s is not None else 10 * options.settle_s
    return due_trace_ids(
        store,
        settled=now - timedelta(seconds=options.settle_s),
        orphaned=now - timedelta(seconds=orphan_after),
        sampled=options.live.sampling.sql("t.trace_id", "t.error"),
        limit=options.batch,
    )


def _record(name: str) -> Callable[[duckdb.DuckDBPyConnection, EvaluationSummary], None]:
    def record(conn: duckdb.DuckDBPyConnection, summary: EvaluationSummary) -> None:
        record_watermark(conn, name, summary.units, datetime.now(UTC).replace(tzinfo=None))

    return record


def judge_due(
    db: Path,
    options: WatchOptions,
    now: datetime | None = None,
    *,
    judged: Callable[[Store], None] | None = None,
) -> WatchBatch | None:
    """One poll: judge up to `options.batch` due traces; None when nothing was due. `judged` is
    called with the store, still open, after a batch was written."""
    with open_store(db) as store:
        now = now or datetime.now(UTC).replace(tzinfo=None)
        due = due_traces(store, options, now)
        if not due:
            return None
        idle = _idle_since(options, now)
        summary = evaluate_store(
            store, domain=options.domain, ladder=options.ladder, live=options.live, trace_ids=due,
            workers=options.workers, after=_record(options.name), judge=options.judge,
            conversation_idle_since=idle,
        )  # fmt: skip
        if judged is not None:
            judged(store)
        return WatchBatch(summary, tuple(read_failed_traces(store, due)))


def _idle_since(options: WatchOptions, now: datetime) -> datetime | None:
    idle = options.conversation_idle_s
    return None if idle is None else now - timedelta(seconds=idle)


def judge_idle_conversations(db: Path, options: WatchOptions, now: datetime | None = None) -> int:
    """One poll's conversation pass (`--conversation-idle`): judge the conversations idle long
    enough whose verdict is missing or older than one of their turns'; returns how many."""
    idle = _idle_since(options, now or datetime.now(UTC).replace(tzinfo=None))
    if idle is None:
        return 0
    with open_store(db) as store, store.transaction() as conn:
        return judge_idle(conn, options.live.policies, idle)


def watch(db: Path, options: WatchOptions, say: Callable[[str], None]) -> WatchProgress:
    """Poll until `options.stopping()` (or, with `options.once`, until nothing is due); `say`
    takes each progress line.

    A missing store is waited for (`serve` creates it). A store held by another process past the
    lock wait (`StoreBusy`) is retried, except with `once`; every other `StoreError` — not a
    store, another program's database, a newer schema, a damaged file — is raised at once: it
    will not heal by polling, and `watch --once` must not exit 0 having judged nothing of it.
    """
    once, stopping = options.once, options.stopping
    progress = WatchProgress()
    waiting_said = False
    policy_checked = False

    def check_policy(store: Store) -> None:
        nonlocal policy_checked
        policy_checked = True
        warn_unseen_policy_sections(store, options.live.policies, say)

    while not stopping():
        if not db.exists():
            if not waiting_said:
                say(f"waiting: {db} does not exist yet (start `traceladder serve --db {db}`)")
                waiting_said = True
            if once:
                return progress
            time.sleep(options.interval_s)
            continue
        try:
            batch = judge_due(db, options, judged=None if policy_checked else check_policy)
            conversations = judge_idle_conversations(db, options)
        except StoreBusy as exc:  # held by a long command: the traces wait safely
            if once:  # nothing was judged: `watch --once && …` must not pass
                raise
            say(f"store busy, retrying: {exc}")
            batch, conversations = None, 0
        if conversations:
            progress.conversations += conversations
            say(f"judged {conversations} idle conversations (total {progress.conversations})")
        if batch is None or batch.summary.units == 0:
            if not waiting_said and progress.judged == 0:
                say("waiting: no complete traces to judge yet (is `traceladder serve` receiving?)")
                waiting_said = True
            if once:
                return progress
            time.sleep(options.interval_s)
            continue
        summary = batch.summary
        progress.batches += 1
        progress.judged += summary.units
        for verdict, n in summary.verdicts.items():
            progress.verdicts[verdict] = progress.verdicts.get(verdict, 0) + n
        progress.conversations += summary.conversations
        counts = " ".join(f"{v}={n}" for v, n in sorted(summary.verdicts.items()))
        counts += f" conversations={summary.conversations}" if summary.conversations else ""
        judged = f"; {summary.judge.line()}" if summary.judge is not None else ""
        say(f"judged {summary.units} traces {counts} (total {progress.judged}){judged}")
        for line in failed_lines(batch.failed):
            say(line)
    return progress


def failed_lines(failed: tuple[FailedTrace, ...]) -> list[str]:
    """One line per failed trace (the first `NAMED_PER_BATCH`): verdict, class, trace id, and the
    case or service it belongs to; then how many more and the query that lists them."""
    lines = []
    for f in failed[:NAMED_PER_BATCH]:
        where = f"case {f.case_id}" if f.case_id else f"service {f.service}" if f.service else ""
        lines.append(f"  {f.verdict} {f.failure_class or '(no class)'} trace {f.trace_id}" + (
            f" ({where})" if where else ""
        ))  # fmt: skip
    if len(failed) > NAMED_PER_BATCH:
        lines.append(
            f"  … and {len(failed) - NAMED_PER_BATCH} more failed traces in this batch: "
            '`traceladder sql "SELECT trace_id, verdict, failure_class FROM trace_results '
            "WHERE verdict IN ('FAIL', 'AGENT_ERROR')\"`"
        )
    return lines
