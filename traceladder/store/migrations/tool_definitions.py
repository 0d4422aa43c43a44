"""Where a tool definition was seen: offered in a request's tool list, or only on a tool span."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

# A tool definition says where it was seen: in a tool list a request sent (what the model
# was offered) or only on a tool span describing itself (so only for tools that ran). NULL: derived
# before this column existed (read as offered, as it was then).
TOOL_DEFINITION_ORIGIN: Migration = (
    "010_tool_definition_origin",
    """
        ALTER TABLE tool_definitions ADD COLUMN offered BOOLEAN;
        """,
)
