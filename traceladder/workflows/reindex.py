"""`traceladder reindex`: every derived row rebuilt from the stored spans by today's extraction.

Bounded in memory (a batch of at most `max_spans` stored spans at a time), resumable (a trace is
rebuilt while its stamp is not the current one: an interrupted run picks up where it stopped), and
safe beside `serve`: each batch is one transaction of its own, on a store opened for that batch
only, so the receiver folds what it acknowledged between batches (its spans are derived by the
current extraction as they are written).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from traceladder.errors import UserError
from traceladder.extract import STAGE
from traceladder.store.db import Store, open_store
from traceladder.store.rebuild import check_where, next_traces, rebuild_traces
from traceladder.store.settings import CONVENTIONS, conventions_setting, record, recorded

MAX_SPANS = 20_000  # stored spans per batch: ~80 MB of 4 KB spans as Arrow, parsed one trace at a time
MAX_TRACES = 2_000


@dataclass
class ReindexSummary:
    traces: int = 0
    batches: int = 0
    conventions: str = ""


def _normalised(names: str) -> str:
    return ",".join(dict.fromkeys(n.strip() for n in names.split(",") if n.strip()))


def reindex(
    path: Path,
    where: str | None = None,
    conventions: str | None = None,
    force: bool = False,
    max_spans: int = MAX_SPANS,
    progress: Callable[[int], None] | None = None,
) -> ReindexSummary:
    """Rebuild the derived rows of the traces matching `where` (a condition over `traces`) whose
    rows another extraction derived (every matching one when `force`). `conventions` first
    records a new plug-in setting (checked to load) — which makes every trace stale."""
    condition = check_where(where)
    with open_store(path, stale_notice=False) as store:
        if conventions is not None:
            names = _normalised(conventions)
            STAGE.check(names)  # a plug-in that does not load is refused before anything changes
            record(store, CONVENTIONS, names)
        setting = recorded(store, CONVENTIONS)
        if setting is None:  # a store no write has recorded a setting for yet: today's choice
            setting, _ = conventions_setting(store)
            STAGE.check(setting)
            record(store, CONVENTIONS, setting)
    summary = ReindexSummary(conventions=setting)
    stamp = STAGE.stamp(setting)
    after = ""
    while True:
        with Store(path) as store:  # one open per batch: `serve` folds in between
            ids = next_traces(store, stamp, condition, after, MAX_TRACES, max_spans, force)
            if not ids:
                break
            summary.traces += rebuild_traces(store, STAGE, ids)
        summary.batches += 1
        after = ids[-1]
        if progress is not None:
            progress(summary.traces)
    return summary


__all__ = ["ReindexSummary", "UserError", "reindex"]
