"""The shapes that cross between the store and the extraction stage, and nothing else.

The store hands the stage what it holds (`TraceRows`: spans and log records, as stored) and the
batch it is about to write; the stage hands back `DerivedRows`, which the store writes as given
(`store.derive`). Storage never reads a span by convention: which spans are tool spans, which
calls a trace made, which tools it was offered, its agent's name — all come from the stage,
stamped with the extraction that produced them (`Stamp`).

The stage is any object with `extract` (`Extraction`); `traceladder.extract.STAGE` is ours.
What each convention read and left unread is `DerivedRows.reading`; later outputs of the stage
(conversations) are further tables of `DerivedRows`, each written by `store.derive` beside the
others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

import pyarrow as pa

from traceladder.decode.decoded import ParsedSpan

# The span columns the stage derives from a span's attributes (the rest of a stored span is the
# decoded OTLP row and its source).
DERIVED_SPAN_FIELDS = (
    pa.field("operation", pa.string()),
    pa.field("tool_name", pa.string()),
    pa.field("tool_call_id", pa.string()),
    pa.field("tool_arguments", pa.string()),
    pa.field("tool_result", pa.string()),
    pa.field("error_type", pa.string()),
    pa.field("convention", pa.string()),
    pa.field("role", pa.string()),  # 'tool' | 'llm' | 'other'; NULL when no convention knows the span
)
DERIVED_SPAN_COLUMNS = tuple(f.name for f in DERIVED_SPAN_FIELDS)

# What the stage reads of a stored span and log record.
STORED_SPAN_COLUMNS = (
    "trace_id", "span_id", "parent_span_id", "name", "kind", "start_ns", "end_ns", "status_code",
    "status_message", "attributes", "events", "scope_name", "resource",
)  # fmt: skip
STORED_LOG_COLUMNS = (
    "trace_id",
    "record_id",
    "span_id",
    "time_ns",
    "event_name",
    "body",
    "attributes",
    "scope_name",
)

CALL_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("ordinal", pa.int32()),
        ("tool_name", pa.string()),
        ("call_id", pa.string()),
        ("arguments_raw", pa.string()),
        ("result", pa.string()),
        ("status", pa.string()),
        ("error_type", pa.string()),
        ("convention", pa.string()),
        ("origin", pa.string()),
        ("span_id", pa.string()),
        ("response_span_id", pa.string()),
        ("record_id", pa.string()),
        ("turn", pa.int32()),
        ("call_index", pa.int32()),
        ("start_ns", pa.int64()),
        ("end_ns", pa.int64()),
    ]
)
DEFINITION_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("name", pa.string()),
        ("description", pa.string()),
        ("parameters", pa.string()),
        ("convention", pa.string()),
        ("span_id", pa.string()),
        ("offered", pa.bool_()),
    ]
)
# Per trace, what only a convention can say (the rest of the trace index is plain SQL over spans):
# its agent's name, and why its calls cannot be judged whole (`unread`: tool activity no
# convention read; NULL when everything was read).
TRACE_FACT_SCHEMA = pa.schema(
    [("trace_id", pa.string()), ("agent_name", pa.string()), ("unread", pa.string())]
)
# Per trace, how much of it was read (`extract.reading`): a row per convention and role with
# the spans it claimed (`convention` set, `shape` NULL), and a row per shape of tool activity
# nobody read (`convention` NULL): how many items, and the first few span or record ids.
READING_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("convention", pa.string()),
        ("role", pa.string()),
        ("shape", pa.string()),
        ("source", pa.string()),
        ("items", pa.int32()),
        ("ids", pa.string()),  # JSON array text
    ]
)
# Per trace, the conversation its producer names (`extract.conversation_keys`); none: no row.
CONVERSATION_KEY_SCHEMA = pa.schema(
    [("trace_id", pa.string()), ("linked_by", pa.string()), ("conversation_key", pa.string())]
)
# Per trace, the calls its first request's input already held: made before it (never its rows).
PRIOR_CALL_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("ordinal", pa.int32()),
        ("tool_name", pa.string()),
        ("call_id", pa.string()),
        ("arguments_raw", pa.string()),
    ]
)


class Stamp(NamedTuple):
    """Which extraction produced a derived row: the stage's version and the conventions in force
    (`builtin`, then the store's plug-ins: `extract.version.conventions_stamp`). Recorded on
    every derived row."""

    version: int
    conventions: str


class TraceRows(NamedTuple):
    """Rows as stored: spans (`STORED_SPAN_COLUMNS`) and log records (`STORED_LOG_COLUMNS`)."""

    spans: pa.Table
    logs: pa.Table


class Batch(NamedTuple):
    """What the stage is handed: the rows about to be written (spans in the store's input shape,
    `store.spans.SPAN_INPUT_SCHEMA`; log records in `LOG_COLUMNS`), and what the store already
    holds of the traces that already had some (`stored`). `spans` and `logs` may repeat stored
    rows (a re-sent request) and repeat themselves; the store keeps the first of each. `parsed`,
    when given, holds per row of `spans` its attributes and events as the decoder parsed them
    (`decode.decoded.ParsedSpan`: exactly what their JSON texts parse to; None for a row without),
    so the stage reads them instead of parsing the text again."""

    spans: pa.Table | None
    logs: pa.Table | None
    stored: TraceRows
    parsed: Sequence[ParsedSpan | None] | None = None


class DerivedRows(NamedTuple):
    """The stage's output for the traces it was handed (`trace_ids`: every trace of the batch):
    `spans` the batch's spans with `DERIVED_SPAN_COLUMNS` filled in; `calls` (`CALL_SCHEMA`),
    `definitions` (`DEFINITION_SCHEMA`), `facts` (`TRACE_FACT_SCHEMA`) and `reading`
    (`READING_SCHEMA`) replace the traces' rows; so do `keys` (`CONVERSATION_KEY_SCHEMA`) and
    `prior` (`PRIOR_CALL_SCHEMA`), which group the traces into conversations
    (`store.conversation_groups`); None: the stage derived none."""

    stamp: Stamp
    trace_ids: pa.Array
    spans: pa.Table | None
    calls: pa.Table
    definitions: pa.Table
    facts: pa.Table
    reading: pa.Table
    keys: pa.Table | None = None
    prior: pa.Table | None = None


class Extraction(Protocol):
    """The extraction stage as the store calls it. `extract` is pure: it reads only its arguments."""

    def extract(self, batch: Batch, conventions: str) -> DerivedRows:
        """Derived rows of every trace in `batch`, reading with the plug-ins named in `conventions`
        (the store's setting). Raises `UserError` when a named plug-in cannot be loaded."""
        ...
