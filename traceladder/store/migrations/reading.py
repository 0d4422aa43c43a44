"""What the extraction stage read of each trace, and what it could not read (issue 32)."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

# `trace_reading`: per trace, the spans each convention claimed (one row per convention and role,
# `convention` set) and each shape of tool activity no convention read (`convention` NULL: the
# shape, where it was seen — span, attribute, span_event, log_record —, how many, the first ids).
# `traces.unread`: the reason a trace's calls cannot be judged whole (NULL: everything was read);
# every rung that reads calls is `not_evaluated` with it. Derived rows, stamped like the others.
TRACE_READING: Migration = (
    "012_trace_reading",
    """
        CREATE TABLE trace_reading (
            trace_id VARCHAR NOT NULL,
            convention VARCHAR,
            role VARCHAR,
            shape VARCHAR,
            source VARCHAR,
            items INTEGER NOT NULL,
            ids VARCHAR,
            extraction INTEGER,
            conventions VARCHAR
        );
        ALTER TABLE traces ADD COLUMN unread VARCHAR;
        """,
)
