"""OTel GenAI's extraction as SQL over the stored spans: the set-based fold's common case.

It settles the shape most GenAI producers write — chat spans whose `gen_ai.output.messages`
carry `tool_call` parts with ids, and one `execute_tool` span per call carrying the same id — and
gives exactly the rows `extract_trace` gives for it (tests/conventions/test_set_fold.py compares them on every
captured fixture). What it settles, and why that is exact (docs/conventions.md, "The set-based
fold"):

* each response's calls are its output messages' `tool_call` parts in order; every part has an
  id, unique in the trace; every tool span has an id and a result and answers exactly one call
  — so the Python matching takes the id path, and no history can add a result or a call;
* every request whose history could be read has exactly as many assistant messages as there
  were responses before it (counted as `assistant_turns` counts them, without parsing), so the
  Python skips every history too;
* argument text: the part's string; a structured part's, the tool span's text when it is the
  same JSON byte for byte once both are minified (the Python then takes it too); any other
  structured part is handed back (`arguments_structured`, `execution_arguments`) for the
  Python's own rule to decide;
* a call no tool span answers only when no later request has a history (nothing could answer it);
* no nested LLM spans, no two responses starting at the same time, no span events on an LLM
  span, no message shapes other conventions' readers share (`tool_calls`, `toolUse`, string
  `parts`), no values that are not text where text is read.

Every other trace is reported by `unsettled` and goes to the Python extraction.
"""

from __future__ import annotations

from traceladder.conventions.base import SetExtraction

# A number the Python's JSON reader (orjson) refuses and DuckDB's reads: an exponent beyond a
# double's range (orjson: "number is infinity"). Three exponent digits are enough to send the
# trace to Python; text inside a string that looks like one only costs the fast path.
_ODD_NUMBERS = r"'[:\[,][ \t\n\r]*-?[0-9]+(\.[0-9]*)?[eE]\+?[0-9]{3}'"
# Python's `\s` (str patterns): ASCII whitespace, \x1c-\x1f, \x85 and Unicode separators.
_PY_SPACE = r"[\t\n\x0b\f\r\x{1c}-\x{1f}\x{85}\p{Z}]"
_TEXT_OR_NULL = "IN ('VARCHAR', 'NULL')"
_STRUCTURED = "IN ('OBJECT', 'ARRAY')"


def _type(key: str) -> str:
    """SQL: the JSON type of attribute `key` (a `fold_spans` column; NULL when absent)."""
    return f'json_type("{key}")'


def _text(key: str) -> str:
    """SQL: attribute `key` as text (a string's value; other JSON as JSON text; NULL for null)."""
    return f"(\"{key}\"->>'$')"


def build(
    *,
    output_messages: str,
    input_messages: str,
    tool_name: str,
    tool_call_id: str,
    tool_call_arguments: str,
    tool_call_result: str,
    error_attrs: tuple[str, ...],
    error_type: str,
    convention: str,
) -> SetExtraction:
    """The SQL, with the convention's attribute names (passed in: this module imports nothing of
    the convention that uses it)."""
    result_keys = (tool_call_result, *error_attrs)
    result_types = " OR ".join(f"coalesce({_type(k)} NOT {_TEXT_OR_NULL}, false)" for k in result_keys)
    result = ", ".join(_text(k) for k in result_keys)
    ctes = f"""
WITH llm0 AS MATERIALIZED (
  SELECT trace_id, span_id, parent_span_id, start_ns, end_ns, events,
         row_number() OVER (PARTITION BY trace_id ORDER BY start_ns, span_id) AS turn,
         count(*) OVER (PARTITION BY trace_id, start_ns) AS same_time,
         {_type(output_messages)} AS out_type, {_text(output_messages)} AS out_text,
         {_type(input_messages)} AS in_type, {_text(input_messages)} IS NOT NULL AS has_history,
         -- the history is the largest text of a span: read once here, never carried further
         len(regexp_extract_all({_text(input_messages)}, '"role"{_PY_SPACE}*:{_PY_SPACE}*"assistant"'))
           AS history_assistants
  FROM fold_spans WHERE role = 'llm'
), llm AS (
  SELECT *, max(turn) FILTER (WHERE has_history) OVER (PARTITION BY trace_id) AS last_history_turn
  FROM llm0
), readable AS (
  SELECT *, out_type = 'VARCHAR' AND json_valid(out_text) AND try(json_type(out_text)) = 'ARRAY'
              AND NOT regexp_matches(out_text, '"tool_calls"[ \t\n\r]*:')
              AND NOT contains(out_text, 'toolUse')
              AND NOT regexp_matches(out_text, {_ODD_NUMBERS}) AS plain
  FROM llm
), resp0 AS MATERIALIZED (
  SELECT *,
    CASE WHEN plain
         THEN list_filter(json_extract(out_text, '$[*].parts[*]'), lambda p: (p->>'type') = 'tool_call')
         ELSE [] END AS calls,
    CASE WHEN plain
         THEN len(list_filter(json_extract(out_text, '$[*].parts'), lambda x: json_type(x) <> 'ARRAY'))
         ELSE 0 END AS odd_parts
  FROM readable
), resp AS (
  SELECT *, min(turn) FILTER (WHERE len(calls) > 0) OVER (PARTITION BY trace_id) AS first_call_turn FROM resp0
), part AS (
  SELECT trace_id, span_id AS response_span_id, start_ns AS response_start, turn,
         unnest(calls) AS p, generate_subscripts(calls, 1) - 1 AS call_index
  FROM resp WHERE len(calls) > 0
), pc AS MATERIALIZED (
  SELECT trace_id, response_span_id, response_start, turn, call_index,
         json_type(p, '$.name') AS name_t, p->>'name' AS name,
         json_type(p, '$.id') AS id_t, nullif(p->>'id', '') AS call_id,
         json_type(p, '$.arguments') AS args_t, p->>'arguments' AS args_text,
         json_extract(p, '$.arguments')::VARCHAR AS args_json
  FROM part
), ex AS MATERIALIZED (
  SELECT trace_id, span_id, parent_span_id, start_ns, end_ns, status_code, events,
         {_type(tool_name)} AS name_t, {_text(tool_name)} AS name,
         {_type(tool_call_id)} AS id_t,
         nullif({_text(tool_call_id)}, '') AS call_id,
         {_type(tool_call_arguments)} AS args_t,
         {_text(tool_call_arguments)} AS args,
         {result_types} AS odd_result, coalesce({result}) AS result,
         {_type(error_type)} AS error_t, {_text(error_type)} AS error_type
  FROM fold_spans WHERE role = 'tool'
), ex_n AS (
  SELECT *, count(*) OVER (PARTITION BY trace_id, call_id) AS same_id FROM ex
), joined AS MATERIALIZED (
  SELECT p.*, e.span_id, coalesce(e.start_ns, r.start_ns) AS start_ns, coalesce(e.end_ns, r.end_ns) AS end_ns,
         e.status_code, e.args_t AS e_args_t, e.args AS e_args, e.result, e.error_type, e.name AS e_name,
         count(*) OVER (PARTITION BY p.trace_id, p.call_id) AS same_id,
         -- a later request's history could answer a call no tool span did: Python reads it
         e.span_id IS NULL AND p.turn < coalesce(r.last_history_turn, 0) AS history_may_answer
  FROM pc p LEFT JOIN ex e ON e.trace_id = p.trace_id AND e.call_id = p.call_id
  JOIN llm r ON r.trace_id = p.trace_id AND r.span_id = p.response_span_id
)"""
    unsettled = f"""
SELECT trace_id FROM readable
WHERE same_time > 1 OR json_array_length(events) > 0
   OR coalesce(out_type NOT {_TEXT_OR_NULL}, false) OR coalesce(in_type NOT {_TEXT_OR_NULL}, false)
   OR (out_type = 'VARCHAR' AND NOT plain)
UNION ALL
SELECT trace_id FROM resp WHERE odd_parts > 0
UNION ALL
SELECT trace_id FROM joined
WHERE coalesce(name_t NOT {_TEXT_OR_NULL}, false) OR coalesce(id_t NOT {_TEXT_OR_NULL}, false)
   OR call_id IS NULL OR same_id > 1 OR history_may_answer
   OR coalesce(args_t NOT IN ('VARCHAR', 'NULL', 'OBJECT', 'ARRAY'), false)
UNION ALL
SELECT e.trace_id FROM ex_n e LEFT JOIN (SELECT trace_id, call_id, count(*) AS n FROM pc GROUP BY ALL) r
  ON r.trace_id = e.trace_id AND r.call_id = e.call_id
WHERE coalesce(e.name_t NOT {_TEXT_OR_NULL}, false) OR coalesce(e.id_t NOT {_TEXT_OR_NULL}, false)
   OR coalesce(e.args_t NOT {_TEXT_OR_NULL}, false) OR e.odd_result
   OR coalesce(e.error_t NOT {_TEXT_OR_NULL}, false)
   OR e.call_id IS NULL OR e.result IS NULL OR e.same_id > 1 OR r.n IS NULL
   OR (e.status_code = 'ERROR' AND e.error_type IS NULL AND json_array_length(e.events) > 0)
UNION ALL
SELECT e.trace_id FROM ex e JOIN ex o ON o.trace_id = e.trace_id AND o.span_id = e.parent_span_id
UNION ALL
SELECT l.trace_id FROM llm l JOIN llm o ON o.trace_id = l.trace_id AND o.span_id = l.parent_span_id
UNION ALL
SELECT l.trace_id FROM resp l
WHERE l.has_history AND l.turn > l.first_call_turn AND l.history_assistants <> l.turn - 1
"""
    calls = f"""
SELECT trace_id,
       row_number() OVER (PARTITION BY trace_id ORDER BY response_start, response_span_id, call_index)
         ::INTEGER AS ordinal,
       coalesce(name, e_name, '') AS tool_name, call_id,
       CASE WHEN args_t = 'VARCHAR' THEN args_text
            WHEN args_t {_STRUCTURED} THEN CASE WHEN e_args_t = 'VARCHAR' AND json_valid(e_args)
              AND NOT regexp_matches(e_args, {_ODD_NUMBERS}) AND try(json(e_args))::VARCHAR = args_json
              THEN e_args END
            ELSE e_args END AS arguments_raw,
       result,
       CASE WHEN span_id IS NULL THEN 'unknown'
            WHEN status_code = 'ERROR' OR error_type IS NOT NULL THEN 'error' ELSE 'ok' END AS status,
       error_type, '{convention}' AS convention, 'response' AS origin,
       coalesce(span_id, response_span_id) AS span_id,
       response_span_id, NULL::VARCHAR AS record_id, turn::INTEGER AS turn, call_index::INTEGER AS call_index,
       start_ns, end_ns,
       -- structured arguments not settled above: the Python's own rule decides (storage.set_fold)
       CASE WHEN args_t {_STRUCTURED} AND arguments_raw IS NULL THEN args_json END AS arguments_structured,
       CASE WHEN args_t {_STRUCTURED} AND arguments_raw IS NULL THEN e_args END AS execution_arguments,
       false AS unsettled
FROM joined
"""
    keys = (
        output_messages,
        input_messages,
        tool_name,
        tool_call_id,
        tool_call_arguments,
        *result_keys,
        error_type,
    )
    sql = f"{ctes}\n{calls} UNION ALL BY NAME SELECT trace_id, true AS unsettled FROM ({unsettled})"
    return SetExtraction(sql, keys)
