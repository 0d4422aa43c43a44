"""A store of many suite-shaped traces, built in bulk: a few hundred distinct traces are drawn in
Python (the retail cases' golden calls, perturbed as in bench/workload.py), then replicated in SQL
under fresh trace ids — 200k traces in seconds, so a test can measure how `evaluate` scales with
the store rather than how fast Python writes rows."""

from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb
import pyarrow as pa

from traceladder.extract import STAGE
from traceladder.store import Store
from traceladder.store.derived import TRACE_FACT_SCHEMA
from traceladder.store.settings import conventions_setting
from traceladder.store.trace_index import index_traces
from traceladder.suite.cases import load_cases

READS = [("get_user", {"user_id": "U101"}), ("list_orders", {"user_id": "U102"}),
         ("get_return_policy", {}), ("get_order", {"order_id": "W444"})]  # fmt: skip


def _template(distinct: int, seed: int) -> tuple[pa.Table, pa.Table]:
    rng = random.Random(seed)
    cases = [c for c in load_cases() if c.calls]
    roots: dict[str, list] = {"k": [], "attributes": []}
    calls: dict[str, list] = {k: [] for k in ("k", "ordinal", "tool_name", "arguments_raw", "result")}
    for k in range(distinct):
        case = cases[k % len(cases)]
        roots["k"].append(k)
        roots["attributes"].append(
            json.dumps({"gen_ai.operation.name": "invoke_agent", "traceladder.case.id": case.id,
                        "traceladder.run.id": "bulk"})
        )  # fmt: skip
        sequence = [(c.tool, dict(c.params)) for c in case.calls]
        while len(sequence) < 2 or (len(sequence) < 6 and rng.random() < 0.5):
            sequence.insert(rng.randrange(len(sequence) + 1), rng.choice(READS))
        for ordinal, (tool, args) in enumerate(sequence, 1):
            roll = rng.random()
            if roll < 0.15 and args:
                key = rng.choice(list(args))
                args = dict(args, **{key: f"X{rng.randrange(10_000)}"})
            raw = json.dumps(args)
            if roll > 0.97:
                raw = raw[:-1]  # invalid JSON
            calls["k"].append(k)
            calls["ordinal"].append(ordinal)
            calls["tool_name"].append(tool)
            calls["arguments_raw"].append(raw)
            calls["result"].append('{"action_id": "ACT-001"}' if tool.startswith("request_") else "{}")
    return pa.table(roots), pa.table(calls)


def bulk_store(path: Path, traces: int, *, distinct: int = 500, seed: int = 7) -> None:
    """Create `path` holding `traces` case-tagged traces (one invoke_agent root span each, with
    its tool calls), trace i a copy of template i mod `distinct` under its own trace id."""
    roots, calls = _template(distinct, seed)
    with Store(path) as store, store.transaction() as conn:
        conn.register("tmpl_roots", roots)
        conn.register("tmpl_calls", calls)
        conn.execute(
            f"""
            INSERT INTO spans (trace_id, span_id, name, kind, start_ns, end_ns, status_code,
                               attributes, events, resource, source, operation)
            SELECT printf('%032x', r.i), printf('%016x', r.i), 'invoke_agent bulk', 'INTERNAL',
                   r.i, r.i + 1, 'UNSET',
                   t.attributes,
                   '[]', '{{}}', 'bulk', 'invoke_agent'
            FROM (SELECT range AS i FROM range({traces})) r JOIN tmpl_roots t ON t.k = r.i % {distinct}
            """
        )
        conn.execute(
            f"""
            INSERT INTO tool_calls (trace_id, span_id, ordinal, tool_name, arguments_raw, arguments,
                                    status, result)
            SELECT printf('%032x', r.i), printf('%08x%08x', r.i, c.ordinal), c.ordinal, c.tool_name,
                   c.arguments_raw, try_cast(c.arguments_raw AS JSON), 'ok', c.result
            FROM (SELECT range AS i FROM range({traces})) r JOIN tmpl_calls c ON c.k = r.i % {distinct}
            """
        )
        conn.unregister("tmpl_roots")
        conn.unregister("tmpl_calls")
        index_every_trace(store, conn)


def index_every_trace(store: Store, conn: duckdb.DuckDBPyConnection) -> None:
    """The trace index of every trace in the store, stamped as today's extraction stamps it, as a
    write through the extraction stage leaves it: a trace without an index row was read by no
    extraction, and is NOT_EVALUATED (decision 520)."""
    setting, _ = conventions_setting(store)
    conn.register("affected_traces", conn.sql("SELECT DISTINCT trace_id FROM spans").to_arrow_table())
    conn.register("derived_facts", TRACE_FACT_SCHEMA.empty_table())
    try:
        index_traces(conn, stamp=STAGE.stamp(setting))
    finally:
        conn.unregister("affected_traces")
        conn.unregister("derived_facts")


def judged_runs_store(path: Path, traces: int, runs: tuple[str, ...] = ("bulk", "bulk-b")) -> None:
    """`bulk_store`'s traces plus one `execute_tool` span per tool call (~4.5 spans a trace), split
    by a hash of the trace id between `runs` (the first keeps the template's `bulk`), judged by
    `traceladder evaluate --no-judge` and recorded as finished runs of the retail suite, each trace
    a repeat of its case — so `gate`, `compare` and `report` have runs to read."""
    from conftest import cli_in_process

    bulk_store(path, traces)
    with Store(path) as store, store.transaction() as conn:
        # one execute_tool span per stored call, under its trace's root
        conn.execute("""
            INSERT INTO spans (trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code,
                               attributes, events, resource, source, operation)
            SELECT c.trace_id, c.span_id, s.span_id, 'execute_tool ' || c.tool_name, 'INTERNAL', s.start_ns,
                   s.end_ns, 'UNSET',
                   json_object('gen_ai.operation.name', 'execute_tool', 'gen_ai.tool.name', c.tool_name,
                               'gen_ai.tool.call.arguments', c.arguments_raw)::VARCHAR,
                   '[]', '{}', 'bulk', 'execute_tool'
            FROM tool_calls c JOIN spans s USING (trace_id)
        """)
        for i, run in enumerate(runs[1:], 1):
            conn.execute(
                f"""UPDATE spans SET attributes = replace(attributes, '"bulk"', '"{run}"')
                WHERE operation = 'invoke_agent' AND hash(trace_id) % {len(runs)} = {i}"""
            )
        index_every_trace(store, conn)  # its spans counted again
    done = cli_in_process("evaluate", "--db", str(path), "--no-judge")  # set-up, not the subject
    if done.returncode:
        raise RuntimeError(done.stderr)
    # the runs recorded as finished runs of the retail suite (after evaluate: a recorded run's
    # traces are its case runs', and these have none), each trace a repeat of its case
    with Store(path) as store, store.transaction() as conn:
        conn.execute("""
            CREATE TEMP TABLE repeats AS SELECT trace_id, run_id, case_id, dimension,
                row_number() OVER (PARTITION BY run_id, case_id ORDER BY trace_id) - 1 AS repeat_index
            FROM trace_results
        """)
        for table in ("trace_results", "findings"):
            conn.execute(
                f"UPDATE {table} t SET repeat_index = r.repeat_index FROM repeats r WHERE t.trace_id = r.trace_id"
            )
        conn.execute(
            "INSERT INTO case_runs (run_id, case_id, repeat_index, trace_id, dimension, agent_status, "
            "finished_at) SELECT run_id, case_id, repeat_index, trace_id, dimension, 'ok', now() FROM repeats"
        )
        conn.execute("""
            INSERT INTO runs (run_id, suite, domain, model, status, cases_total, started_at, finished_at)
            SELECT run_id, 'retail_fc.jsonl', 'retail', 'sim:bulk', 'complete', count(*), now(), now()
            FROM repeats GROUP BY run_id
        """)
