"""Reading what the evaluation layer and the reports need, set-based: one query for the judging
units, one query per batch of traces for their tool calls (never one per trace), one query per
table for a run's results.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from traceladder.errors import UserError
from traceladder.instrumentation import semconv as sc
from traceladder.store.db import Store, trace_id_table
from traceladder.trace_facts import TraceFacts

if TYPE_CHECKING:  # Arrow is imported by the readers that build a table, not by every command
    import pyarrow as pa

# A trace's captured tool definitions: (tool name, parameters JSON text or None, offered — seen in a
# tool list a request sent, not only on a tool span describing itself).
Definitions = tuple[tuple[str, str | None, bool], ...]

# The judging units: every trace in the store. Only its root (and invoke_agent) spans are read
# for what they name, as two scans whose filters DuckDB pushes into the scan (`operation =`, `IS
# NULL`), so the attributes column is decompressed only in the vectors holding such a span and
# copied only for them. The attributes are stored ZSTD-compressed (decision 362): fetching the
# roots by rowid, or one scan filtered by `a OR b` (applied after the attributes are read),
# decompressed and copied the whole column — on 1M agent spans carrying chat histories ~4 CPU-s
# against ~2 for the two pushed-down scans (issue 36; decision 660). Their attributes are read
# once per evaluation (`unit_roots`), each root's JSON parsed once for every key, and a batch's
# units are then read from those rows (`read_units_of`, decision 550). The trace ids come from
# the `trace_id` column alone, so a trace whose root never arrived is still a unit.
# A root (or invoke_agent) span may name a case, a run and a domain; a `case_runs` row, when there
# is one, is authoritative for them and adds the
# agent status. A trace of one of our own runs without a `case_runs` row is an attempt that never
# finished (Ctrl-C, a failed write): `--resume` runs that case again, so it is not a unit.
_ROOT_KEYS = (sc.CASE_ID, sc.RUN_ID, sc.CASE_REPEAT, sc.DOMAIN)
_LEDGER_KEY = sc.SANDBOX_LEDGER
_ROOT_PATHS = ", ".join(f"'$.\"{key}\"'" for key in (*_ROOT_KEYS, _LEDGER_KEY))
_ROOT_SPANS = """
SELECT rowid FROM spans {only}
WHERE source IS DISTINCT FROM 'judge' AND (operation = 'invoke_agent' OR parent_span_id IS NULL)
"""
_ROOT_FIELDS = f"trace_id, status_code, error_type, json_extract_string(attributes, [{_ROOT_PATHS}]) AS f"
# The roots as two scans with pushed-down filters: the fast way (see above).
_ROOTS_SCANNED = f"""
SELECT {_ROOT_FIELDS} FROM spans {{only}} WHERE operation = 'invoke_agent' AND source IS DISTINCT FROM 'judge'
UNION ALL
SELECT {_ROOT_FIELDS} FROM spans {{only}}
WHERE parent_span_id IS NULL AND operation IS DISTINCT FROM 'invoke_agent' AND source IS DISTINCT FROM 'judge'
"""
# The roots fetched a row at a time, by rowid: the way that holds one value at a time. A scan
# materialises a vector of them (up to 2,048 rows), so a few roots of tens of MB each in one
# vector outgrow even the roomy cap (four 40 MB roots: 1 GB), where a fetch needs one value's
# buffer (decision 660).
_ROOTS_FETCHED = f"SELECT {_ROOT_FIELDS} FROM spans WHERE rowid IN ({_ROOT_SPANS})"
_UNIT_ROOTS = """
WITH unit_ids AS (
    SELECT DISTINCT trace_id FROM spans {only} WHERE source IS DISTINCT FROM 'judge'
),
root_spans AS (
    SELECT trace_id,
           max(f[1]) AS case_id,
           max(f[2]) AS run_id,
           max(TRY_CAST(f[3] AS INTEGER)) AS repeat_index,
           max(f[4]) AS domain,
           bool_or(status_code = 'ERROR') AS root_error,
           max(error_type) AS root_error_type,
           bool_or(f[5] IS NOT NULL) AS has_ledger
    FROM ({roots})
    GROUP BY trace_id
)
SELECT u.trace_id, r.case_id, r.run_id, r.repeat_index, r.domain, r.root_error, r.root_error_type,
       coalesce(r.has_ledger, false) AS has_ledger, coalesce(ru.domain, r.domain) AS named_domain
FROM unit_ids u
LEFT JOIN root_spans r USING (trace_id)
LEFT JOIN case_runs cr ON cr.trace_id = u.trace_id
LEFT JOIN case_turns ct ON ct.trace_id = u.trace_id
LEFT JOIN runs ru ON ru.run_id = coalesce(cr.run_id, ct.run_id, r.run_id)
WHERE ($run IS NULL OR coalesce(cr.run_id, ct.run_id, r.run_id) = $run)
  AND (cr.trace_id IS NOT NULL OR ct.trace_id IS NOT NULL OR r.run_id IS NULL OR ru.run_id IS NULL)
ORDER BY coalesce(cr.run_id, ct.run_id, r.run_id) NULLS LAST,
         coalesce(cr.case_id, ct.case_id, r.case_id) NULLS LAST,
         coalesce(cr.repeat_index, ct.repeat_index, r.repeat_index, 0), ct.turn NULLS FIRST, u.trace_id
"""
# A batch of units from their roots' rows (`unit_roots`, registered), in `_UNIT_ROOTS` order.
_UNITS = """
SELECT t.trace_id,
       coalesce(cr.run_id, ct.run_id, t.run_id) AS run_id,
       coalesce(cr.case_id, ct.case_id, t.case_id) AS case_id,
       coalesce(cr.repeat_index, ct.repeat_index, t.repeat_index, 0) AS repeat_index,
       coalesce(ru.domain, t.domain) AS domain,
       coalesce(ct.agent_status, cr.agent_status,
                CASE WHEN coalesce(t.root_error, false) THEN 'error' ELSE 'ok' END) AS agent_status,
       coalesce(ct.error_type, cr.error_type, t.root_error_type) AS error_type,
       d.definitions, ct.turn
FROM unit_roots t
LEFT JOIN case_runs cr ON cr.trace_id = t.trace_id
LEFT JOIN case_turns ct ON ct.trace_id = t.trace_id
LEFT JOIN runs ru ON ru.run_id = coalesce(cr.run_id, ct.run_id, t.run_id)
LEFT JOIN (SELECT trace_id, {key} AS definitions FROM tool_definitions SEMI JOIN unit_roots USING (trace_id)
           GROUP BY trace_id) d
    ON d.trace_id = t.trace_id
ORDER BY run_id NULLS LAST, case_id NULLS LAST, repeat_index, ct.turn NULLS FIRST, t.trace_id
"""
# The sandbox ledgers of the traces whose roots carry one (`ledger_traces`): only our own suite
# runs' traces have one, so a store of other traces never reads them.
_LEDGERS = f"""
SELECT trace_id, max(attributes->>'$."{_LEDGER_KEY}"')
FROM spans WHERE rowid IN ({_ROOT_SPANS.format(only="SEMI JOIN ledger_traces USING (trace_id)")})
GROUP BY trace_id
"""

# What the trace index says of each unit, read apart from `_UNITS`: joined there, the five joins'
# hash tables outgrew DuckDB's 64 MB share on a large store (issue 36).
_TRACE_FACTS = """
SELECT trace_id, seq, coalesce(error, false), service, service_version, environment, agent_name,
       coalesce(model_turns, 0), start_ns, end_ns, unread
FROM traces {only}
"""

# A trace's captured tool definitions travel as a digest of the whole set: live traffic repeats
# the same few sets, so each distinct set is read (and compiled) once, not once per trace.
# (A sum of 64-bit hashes with the count: order-free and cheap — concatenating the definitions
# of every trace to hash them cost more than judging.)
_DEFINITIONS_KEY = "count(*) || ':' || sum(hash(name, parameters, coalesce(offered, true))::HUGEINT)"
_DEFINITION_SETS = f"""
WITH keyed AS (SELECT trace_id, {_DEFINITIONS_KEY} AS key FROM tool_definitions GROUP BY trace_id),
     one AS (SELECT key, min(trace_id) AS trace_id FROM keyed SEMI JOIN wanted_keys USING (key) GROUP BY key)
SELECT one.key, list((d.name, d.parameters, coalesce(d.offered, true)) ORDER BY d.name, d.parameters)
FROM one JOIN tool_definitions d USING (trace_id)
GROUP BY one.key
"""

_CALLS = """
SELECT tc.trace_id, tc.ordinal, tc.tool_name, tc.arguments_raw, tc.status, tc.result
FROM tool_calls tc SEMI JOIN unit_traces u ON tc.trace_id = u.trace_id
ORDER BY tc.trace_id, tc.ordinal
"""


# The runs the spans record and the model each says it used: our agent loop puts both on the
# invoke_agent span (`traceladder.run.id`, `gen_ai.request.model`), so any copy of the spans — the
# store, a Parquet export — answers "were these simulated-model runs?" alike (`{spans}`: a
# relation in the span shape; `$run`: one run, or NULL for all).
RUN_MODELS = """
SELECT DISTINCT attributes->>'$."traceladder.run.id"' AS run_id,
       attributes->>'$."gen_ai.request.model"' AS model
FROM {spans}
WHERE attributes->>'$."gen_ai.operation.name"' = 'invoke_agent' AND source IS DISTINCT FROM 'judge'
  AND attributes->>'$."traceladder.run.id"' IS NOT NULL
  AND ($run IS NULL OR attributes->>'$."traceladder.run.id"' = $run)
ORDER BY ALL
"""


@dataclass(frozen=True)
class UnitRow:
    """What the store says about one trace before it is judged."""

    trace_id: str
    run_id: str | None
    case_id: str | None
    repeat_index: int
    domain: str | None
    agent_status: str
    error_type: str | None
    seq: int | None = None  # the arrival judged (see store.trace_index)
    error: bool = False  # a span of the trace has an error status
    facts: TraceFacts = TraceFacts()
    definitions: str | None = (
        None  # digest of the tool definitions the trace captured (see read_definition_sets)
    )
    ledger: str | None = None  # the sandbox's end state (JSON) our agent loop recorded on its root span
    unread: str | None = None  # why its calls cannot be judged whole (tool activity no convention read)
    turn: int | None = None  # the 0-based turn of a multi-turn case this trace played (`case_turns`)


# A trace with spans but no row in the trace index was never read by the extraction stage (spans
# copied in by SQL, a write interrupted between its spans and its derived rows): nothing says
# whether it made calls, so it is never judged as a trace without any (never a PASS by default).
NOT_EXTRACTED = (
    "no extraction has read this trace (it has spans but no row in the trace index); "
    "run `traceladder reindex` to read it"
)
_NO_FACTS = (None, None, False, None, None, None, None, 0, None, None, NOT_EXTRACTED)


def _unit(row: tuple[Any, ...], index: tuple[Any, ...] | None, ledger: str | None) -> UnitRow:
    trace_id, run_id, case_id, repeat, domain, status, error_type, definitions, turn = row
    (_, seq, error, service, version, environment, agent, turns, start_ns, end_ns, unread) = (
        index or _NO_FACTS
    )
    duration = (end_ns - start_ns) / 1e6 if start_ns is not None and end_ns is not None else None
    facts = TraceFacts(
        service, version, environment, agent, turns,
        duration if duration is not None and duration >= 0 else None,  # a skewed clock: unknown
        start_ns,
    )  # fmt: skip
    return UnitRow(
        trace_id,
        run_id,
        case_id,
        repeat,
        domain,
        status,
        error_type,
        seq,
        error,
        facts,
        definitions,
        ledger,
        unread,
        turn,
    )


def unit_order(unit: UnitRow) -> tuple[Any, ...]:
    """The order `read_units` returns units in (`_UNITS`'s ORDER BY), for units gathered elsewhere:
    which of two traces with one trajectory asks the judge must not depend on where they were read."""
    run, case = unit.run_id, unit.case_id
    turn = -1 if unit.turn is None else unit.turn
    return (run is None, run or "", case is None, case or "", unit.repeat_index, turn, unit.trace_id)


def read_units(
    store: Store, run_id: str | None = None, trace_ids: Sequence[str] | pa.Array | None = None
) -> list[UnitRow]:
    """The judging units of the store, of one run, or of exactly these traces."""
    roots, _ = unit_roots(store, run_id, trace_ids)
    return read_units_of(store, roots)


def unit_roots(
    store: Store, run_id: str | None = None, trace_ids: Sequence[str] | pa.Array | None = None
) -> tuple[pa.Table, list[str]]:
    """The judging units (of the store, of one run, or of exactly these traces) in `read_units`
    order, as what their root spans say — one row a trace, its run, case and domain dictionary-
    encoded (~45 bytes a trace) — and the domains they name: what an evaluation holds for the
    whole store, so it reads the units themselves a batch at a time (`read_units_of(store,
    roots.slice(a, n))`) without reading the roots' attributes again."""
    import pyarrow.compute as pc

    only = "SEMI JOIN only_traces USING (trace_id)" if trace_ids is not None else ""
    with store.registered("only_traces", trace_id_table(trace_ids if trace_ids is not None else ())) as conn:
        try:
            sql = _UNIT_ROOTS.format(roots=_ROOTS_SCANNED.format(only=only), only=only)
            table = conn.sql(sql, params={"run": run_id}).to_arrow_table()
        except duckdb.OutOfMemoryException:  # roots holding large values: one at a time
            sql = _UNIT_ROOTS.format(roots=_ROOTS_FETCHED.format(only=only), only=only)
            table = conn.sql(sql, params={"run": run_id}).to_arrow_table()
    domains = sorted(d for d in pc.unique(table.column("named_domain")).to_pylist() if d is not None)
    table = table.drop_columns(["named_domain"]).combine_chunks()
    for name in ("case_id", "run_id", "domain", "root_error_type"):  # a few values, repeated
        at = table.schema.get_field_index(name)
        table = table.set_column(at, name, pc.dictionary_encode(table.column(name)))
    return table, domains


def read_units_of(store: Store, roots: pa.Table) -> list[UnitRow]:
    """The units of these rows of `unit_roots` (a slice of them: a batch), in that order, with
    what the store says of them besides their roots: the case run, the trace index, the captured
    tool definitions, the sandbox ledger."""
    import pyarrow as pa
    import pyarrow.compute as pc

    plain = pa.table(
        {
            name: column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column
            for name, column in zip(roots.column_names, roots.columns, strict=True)
        }
    )
    with store.registered("unit_roots", plain) as conn:
        rows = conn.execute(_UNITS.format(key=_DEFINITIONS_KEY)).fetchall()
        only = "SEMI JOIN unit_roots USING (trace_id)"
        facts = {r[0]: r for r in conn.execute(_TRACE_FACTS.format(only=only)).fetchall()}
    ledgers: dict[str, str | None] = {}
    with_ledger = plain.filter(pc.field("has_ledger")).column("trace_id")
    if len(with_ledger):
        with store.registered("ledger_traces", trace_id_table(with_ledger)) as conn:
            ledgers = dict(conn.execute(_LEDGERS).fetchall())
    return [_unit(row, facts.get(row[0]), ledgers.get(row[0])) for row in rows]


def unit_index(
    store: Store, run_id: str | None = None, trace_ids: Sequence[str] | None = None
) -> tuple[pa.Array, list[str]]:
    """The judging units' trace ids in `read_units` order, and the domains they name."""
    roots, domains = unit_roots(store, run_id, trace_ids)
    return roots.column("trace_id").combine_chunks(), domains


def read_definition_sets(store: Store, keys: Iterable[str]) -> dict[str, Definitions]:
    """digest → the (name, parameters JSON, offered) of that set of captured tool definitions."""
    import pyarrow as pa

    wanted = pa.table({"key": pa.array(sorted(set(keys)), pa.string())})
    if not wanted.num_rows:
        return {}
    with store.registered("wanted_keys", wanted) as conn:
        rows = conn.execute(_DEFINITION_SETS).fetchall()
    return {
        key: tuple((name, parameters, offered) for name, parameters, offered in found) for key, found in rows
    }


def read_call_table(store: Store, trace_ids: Sequence[str]) -> pa.Table:
    """Tool calls of these traces in one query, as Arrow (parsed later, where they are judged)."""
    with store.registered("unit_traces", trace_id_table(trace_ids)) as conn:
        return conn.sql(_CALLS).to_arrow_table()


def read_run_models(store: Store, run_id: str | None = None) -> list[tuple[str, str | None]]:
    """(run id, model) for every run the store's spans record (or only `run_id`'s)."""
    # Only the invoke_agent spans' attributes, by a filter DuckDB pushes into the scan (see
    # `_UNIT_ROOTS`): on 1M agent spans 1.5 CPU-s, where fetching them by rowid took 2.9.
    agents = "(SELECT * FROM spans WHERE operation = 'invoke_agent')"
    return [(r, m) for r, m in store.fetchall(RUN_MODELS.format(spans=agents), {"run": run_id})]


def services_and_agents(store: Store) -> tuple[set[str | None], set[str | None]]:
    """Every service and every agent name the stored traces record."""
    services = {r[0] for r in store.fetchall("SELECT DISTINCT service FROM traces")}
    agents = {r[0] for r in store.fetchall("SELECT DISTINCT agent_name FROM traces")}
    return services, agents


def latest_run(store: Store) -> str:
    rows = store.fetchall("SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1")
    if not rows:
        rows = store.fetchall(
            "SELECT run_id FROM trace_results WHERE run_id IS NOT NULL ORDER BY evaluated_at DESC LIMIT 1"
        )
    if not rows:
        raise UserError(f"no runs in {store.path}; run `traceladder run` first")
    return str(rows[0][0])


def dict_rows(store: Store, sql: str, params: Any = None) -> list[dict[str, Any]]:
    """A query's rows as dicts keyed by column name."""
    with store.lock:
        cursor = store.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@dataclass(frozen=True)
class RunRows:
    """Everything stored about one run's judged traces, as plain rows (reports are built from
    these, never re-judged)."""

    run: dict[str, Any]
    results: list[dict[str, Any]]
    rungs: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    calls: dict[str, list[dict[str, Any]]]
    # per trace: its model requests that were retried or had a server quirk tolerated
    requests: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    judgments: list[dict[str, Any]] = field(default_factory=list)  # the run's `trace_judgments` rows


# The chat spans of some traces that carry `traceladder.request.retries` or
# `traceladder.response.quirks` (set by the agent loop only when something happened), with the
# request's step: its position among the trace's chat spans.
_REQUEST_NOTES = """
SELECT trace_id, step, status_code, retries, quirks FROM (
    SELECT s.trace_id, s.status_code,
           row_number() OVER (PARTITION BY s.trace_id ORDER BY s.start_ns, s.span_id) AS step,
           s.attributes->'$."traceladder.request.retries"' AS retries,
           s.attributes->'$."traceladder.response.quirks"' AS quirks
    FROM spans s SEMI JOIN batch_traces USING (trace_id)
    WHERE s.operation = 'chat'
)
WHERE retries IS NOT NULL OR quirks IS NOT NULL
ORDER BY trace_id, step
"""


def request_notes(conn: duckdb.DuckDBPyConnection) -> dict[str, list[dict[str, Any]]]:
    """Per trace of the relation `batch_traces` (its `trace_id`s) on `conn`: its model requests
    that were retried or had a server quirk tolerated (step, succeeded, retries, quirks)."""
    notes: dict[str, list[dict[str, Any]]] = {}
    found = conn.execute(_REQUEST_NOTES).fetchall()
    for trace_id, step, status, retries, quirks in found:
        notes.setdefault(trace_id, []).append(
            {
                "step": int(step),
                "succeeded": status != "ERROR",
                "retries": json.loads(retries) if retries else [],
                "quirks": json.loads(quirks) if quirks else [],
            }
        )
    return notes


def json_or_none(text: str | None) -> Any:
    """Parsed JSON, or None for no text or text that is not JSON (the raw text is kept elsewhere)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


_FAILED = """
SELECT r.trace_id, r.verdict, r.failure_class, r.case_id, t.service
FROM unit_traces u
JOIN trace_results r ON r.trace_id = u.trace_id
LEFT JOIN traces t ON t.trace_id = r.trace_id
WHERE r.verdict IN ('FAIL', 'AGENT_ERROR')
ORDER BY r.trace_id
"""


@dataclass(frozen=True)
class FailedTrace:
    """One trace whose stored verdict is FAIL or AGENT_ERROR, with its class and where it ran."""

    trace_id: str
    verdict: str
    failure_class: str | None
    case_id: str | None
    service: str | None


def read_failed_traces(store: Store, trace_ids: Sequence[str]) -> list[FailedTrace]:
    """The FAIL and AGENT_ERROR results among these traces, by trace id."""
    with store.registered("unit_traces", trace_id_table(trace_ids)) as conn:
        return [FailedTrace(*row) for row in conn.execute(_FAILED).fetchall()]
