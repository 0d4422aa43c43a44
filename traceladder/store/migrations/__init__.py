"""The store's schema, as named migrations applied in order and recorded in `schema_migrations`.

One module per part of the store (`spans_runs`, `results`, `foreign_traces`, `live`, `trend`,
`judgments`, `tool_definitions`, `extraction`, `reading`, `conversations`, `result_notes`), each
holding its migrations; this list is the one order they are applied in. Never edit a released
migration — a store that recorded its name would never see the edit: add a new one at the end of
this list, in the module of the part it changes.
`tests/storage/test_store.py` pins the blank schema."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration
from traceladder.store.migrations.conversations import CONVERSATIONS
from traceladder.store.migrations.extraction import EXTRACTION_STAMP
from traceladder.store.migrations.foreign_traces import OTLP_SOURCES
from traceladder.store.migrations.judgments import JUDGE
from traceladder.store.migrations.live import LIVE_TRACES
from traceladder.store.migrations.reading import TRACE_READING
from traceladder.store.migrations.result_notes import RESULT_NOTES
from traceladder.store.migrations.results import LONG_FORM_RESULTS, QUERY_VIEWS, RESULTS_FINDINGS
from traceladder.store.migrations.spans_runs import CASE_TURNS, SPANS_RUNS
from traceladder.store.migrations.tool_definitions import TOOL_DEFINITION_ORIGIN
from traceladder.store.migrations.trend import ONE_PASS_RATE, TREND_VIEWS

MIGRATIONS: list[Migration] = [
    SPANS_RUNS,  # 001
    RESULTS_FINDINGS,  # 002
    QUERY_VIEWS,  # 003
    LONG_FORM_RESULTS,  # 004
    OTLP_SOURCES,  # 005
    LIVE_TRACES,  # 006
    TREND_VIEWS,  # 007
    JUDGE,  # 008
    ONE_PASS_RATE,  # 009
    TOOL_DEFINITION_ORIGIN,  # 010
    EXTRACTION_STAMP,  # 011
    TRACE_READING,  # 012
    CONVERSATIONS,  # 013
    CASE_TURNS,  # 014
    RESULT_NOTES,  # 015
]
