"""The span source contract: where spans already are, read one shard at a time.

A source yields the spans of the traces of one shard as an Arrow table in the store's span shape
(`store.spans.SPAN_SCHEMA`). Everything after that is the path every span takes: the spans are
written into a scratch store (`store.writes.write_batch`: dedupe, tool-call extraction by the
conventions, the trace index) and judged by the same evaluation as any store — there is no
second judging path (`evaluate.shards`).

A source object is sent to worker processes (Dask pickles it), so it holds only plain data —
never an open connection — and opens what it needs in the process that reads.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import pyarrow as pa


@runtime_checkable
class SpanSource(Protocol):
    """Spans kept somewhere else, readable shard by shard (see the module docstring)."""

    @property
    def name(self) -> str:
        """How to show the source to a person: credentials never appear in it."""
        ...

    def check(self) -> None:
        """Raise `UserError` (one line) when the source cannot be read: missing, empty, wrong
        columns, unreachable. Called once before any shard is dispatched."""
        ...

    def natural_shards(self) -> int | None:
        """The shard count the data is laid out by (a Parquet export's), when there is one: reading
        with that count, or a divisor of it, touches only the shard's own files."""
        ...

    def run_models(self, run_id: str | None) -> list[tuple[str, str | None]]:
        """(run id, model) for every run the spans record on their invoke_agent spans
        (`traceladder.run.id`, `gen_ai.request.model`), or only `run_id`'s: what decides the
        default judge, from the spans themselves, exactly as for a store (`store.readers.RUN_MODELS`)."""
        ...

    def read_shard(self, shard: int, shards: int) -> pa.Table:
        """Every span of every trace whose `shard_of(trace_id, shards) == shard`, in SPAN_SCHEMA.
        A trace is never split across shards: the shard is a function of the trace id alone."""
        ...
