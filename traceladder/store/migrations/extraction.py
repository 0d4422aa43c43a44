"""The extraction stage's stamp on everything it derives, and the store's own settings."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

# Every derived row says which extraction produced it (`extraction`: the stage's version;
# `conventions`: the conventions in force, comma-separated): `traceladder reindex` rebuilds those
# of another extraction. NULL: derived before this migration (an older extraction). A span's
# derived `role` ('tool' | 'llm' | 'other') is the stage's too, so no reader re-decides it in SQL.
# `store_settings` holds what the store itself decides, such as the convention plug-ins in force
# (`conventions`), which once came from an environment variable read at every write.
EXTRACTION_STAMP: Migration = (
    "011_extraction_stamp",
    """
        ALTER TABLE spans ADD COLUMN role VARCHAR;
        ALTER TABLE tool_calls ADD COLUMN extraction INTEGER;
        ALTER TABLE tool_calls ADD COLUMN conventions VARCHAR;
        ALTER TABLE tool_definitions ADD COLUMN extraction INTEGER;
        ALTER TABLE tool_definitions ADD COLUMN conventions VARCHAR;
        ALTER TABLE traces ADD COLUMN extraction INTEGER;
        ALTER TABLE traces ADD COLUMN conventions VARCHAR;
        CREATE TABLE store_settings (name VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
        """,
)
