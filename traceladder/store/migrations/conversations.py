"""Conversations: several traces (turns) of one dialogue, and their verdicts (issue 33).

`conversation_keys` and `prior_calls` are the extraction stage's (stamped like every derived row):
the conversation a trace's producer names, and the calls its first request's input already held
(never its rows; `earlier_trace_id`/`earlier_ordinal` link each to the call of the trace that
made it, where that trace is in the store). `conversations` is the grouping the store derives
from them (`store.conversation_groups`): one row per trace. `conversation_results` and
`conversation_findings` hold a conversation's verdict and its conversation-scope findings.
"""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

CONVERSATIONS: Migration = (
    "013_conversations",
    """
        CREATE TABLE conversation_keys (
            trace_id VARCHAR PRIMARY KEY,
            linked_by VARCHAR NOT NULL,
            conversation_key VARCHAR NOT NULL,
            extraction INTEGER,
            conventions VARCHAR
        );
        CREATE TABLE prior_calls (
            trace_id VARCHAR NOT NULL,
            ordinal INTEGER NOT NULL,
            tool_name VARCHAR NOT NULL,
            call_id VARCHAR,
            arguments_raw VARCHAR,
            earlier_trace_id VARCHAR,
            earlier_ordinal INTEGER,
            extraction INTEGER,
            conventions VARCHAR
        );
        CREATE TABLE conversations (
            conversation_id VARCHAR NOT NULL,
            trace_id VARCHAR PRIMARY KEY,
            turn INTEGER NOT NULL,
            linked_by VARCHAR NOT NULL,
            service_name VARCHAR,
            extraction INTEGER,
            conventions VARCHAR
        );
        CREATE TABLE conversation_results (
            conversation_id VARCHAR NOT NULL,
            run_id VARCHAR,
            verdict VARCHAR NOT NULL,
            deciding_turn INTEGER,
            reason VARCHAR,
            turns INTEGER NOT NULL,
            evaluated_at TIMESTAMP
        );
        CREATE TABLE conversation_findings (
            conversation_id VARCHAR NOT NULL,
            turn INTEGER,
            finding_class VARCHAR NOT NULL,
            message VARCHAR NOT NULL,
            rule VARCHAR
        );
        """,
)
