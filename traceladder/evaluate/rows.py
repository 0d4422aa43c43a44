"""Verdicts → the three result tables.

Per rung, status, scores and explanation go to `rung_results`; the evidence JSON keeps only what
no other table holds: the golden calls, the ignored reads, and every check (with its argument
diffs) of the rungs that did not pass.

A verdict's rows do not depend on which trace it belongs to, so each *distinct* verdict's rows are
built once, and every trace gets them by an Arrow `take` (in C) next to its own identity columns.
Traces judged identical (see `pool.settle_batch`) therefore cost a few list appends each.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from math import isfinite
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from traceladder.evaluate.rungs.types import RungResult, Verdict
from traceladder.store.readers import UnitRow
from traceladder.store.results import FINDING_SCHEMA, RUNG_RESULT_SCHEMA, TRACE_RESULT_SCHEMA, ResultTables
from traceladder.suite.cases.model import Case
from traceladder.text import utf8_deep

_stdlib = json.JSONEncoder(ensure_ascii=False, default=str).encode
_S, _I = pa.string(), pa.int32()


def _encode(value: Any) -> str:
    """JSON text of `value`, by orjson (several times faster than the stdlib encoder, decision
    102); what orjson refuses — an integer beyond 64 bits, a lone surrogate, a key that is not a
    string — goes to the stdlib encoder, which writes every value Python's `json` reads back."""
    try:
        return orjson.dumps(value, default=str).decode()
    except (orjson.JSONEncodeError, TypeError):
        return _stdlib(value)


# Values that are never, and hold nothing, non-finite: most of what a verdict writes (tool names,
# argument strings, ids), answered by one type lookup before any other check.
_FINITE_TYPES = frozenset({str, int, bool, type(None)})


def _has_nonfinite(value: Any) -> bool:
    """A NaN or infinity anywhere in `value` (JSON arguments may hold them: `json.loads` reads
    `NaN`); orjson would write it as null, so such a verdict's values go to the stdlib encoder."""
    kind = type(value)
    if kind in _FINITE_TYPES:
        return False
    if kind is float:
        return not isfinite(value)
    if isinstance(value, dict):
        return any(_has_nonfinite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_nonfinite(v) for v in value)
    return isinstance(value, float) and not isfinite(value)


class RowBuilder:
    """Accumulates judged traces; `tables()` hands them over as one `ResultTables`."""

    def __init__(self, evaluator_version: str) -> None:
        self.version = evaluator_version
        self.now = datetime.now(UTC).replace(tzinfo=None)
        # per trace: the unit (its identity columns are read from it once, in `tables`), its weight
        # and its verdict — three appends a trace, the fewest a judged trace can cost
        self.units: list[UnitRow] = []
        self.weights: list[float] = []
        self.verdict_of: list[int] = []  # index into the distinct verdicts
        # per distinct verdict
        self._index: dict[int, int] = {}  # id(verdict) → index
        self._keep: list[Verdict] = []  # keeps each verdict alive, so its id is never reused
        self.verdict_rows: list[tuple[Any, ...]] = []  # dimension, verdict, class, settled, …, reason
        self.rung_span: list[tuple[int, int]] = []  # [start, end) into `rung_refs`
        self.finding_span: list[tuple[int, int]] = []
        # per distinct rung result: a rung's constant results (`ladder._constant`: not_evaluated
        # for want of an input, skipped by triage) are one object shared by every verdict, so
        # their row is built once, and each verdict lists the rows of its rungs in `rung_refs`
        self._rung_index: dict[int, int] = {}  # id(rung result) → its row (kept alive by `_keep`)
        self.rung_refs: list[int] = []
        self.rung_rows: list[tuple[Any, ...]] = []
        self.score_offsets: list[int] = [0]
        self.score_keys: list[str] = []
        self.score_values: list[float] = []
        self.finding_rows: list[tuple[Any, ...]] = []
        self._golden: dict[str, str] = {}

    def add(self, unit: UnitRow, case: Case | None, v: Verdict, weight: float = 1.0) -> None:
        index = self._index.get(id(v))
        if index is None:
            index = self._index[id(v)] = self._distinct(case, v)
        self.units.append(unit)
        self.weights.append(weight)
        self.verdict_of.append(index)

    def _distinct(self, case: Case | None, v: Verdict) -> int:
        self._keep.append(v)
        encode = _stdlib if _nonfinite_values(v) else _encode
        self.verdict_rows.append(
            (
                case.dimension if case else None,
                v.verdict,
                v.failure_class,
                v.settled_at,
                v.settled_by,
                v.explanation,
                self._evidence(case, v, encode),
                v.reason if v.note else None,  # NULL: the explanation has no note (decision 630)
            )  # fmt: skip
        )
        refs, rung_index, rows = self.rung_refs, self._rung_index, self.finding_rows
        start, first_finding = len(refs), len(rows)
        # one pass over the rungs: each result's row (once per distinct result), then its findings
        for r in v.rungs:
            row = rung_index.get(id(r))
            if row is None:
                row = rung_index[id(r)] = len(self.rung_rows)
                self.rung_rows.append((r.rung, r.name, r.status, r.explanation))
                self.score_keys += r.scores.keys()
                self.score_values += r.scores.values()
                self.score_offsets.append(len(self.score_keys))
            refs.append(row)
            name = r.name
            # a finding unpacked once (a named tuple): cheaper than an attribute read per field
            for rung, code, message, tool, param, expected, actual, ordinal in r.findings:
                rows.append(
                    (
                        rung,
                        code,
                        tool,
                        param,
                        None if expected is None else encode(expected),
                        None if actual is None else encode(actual),
                        message,
                        ordinal,
                        name,
                    )
                )
        self.rung_span.append((start, len(refs)))
        self.finding_span.append((first_finding, len(rows)))
        return len(self.verdict_rows) - 1

    def tables(self) -> ResultTables:
        units = self.units
        # the identity columns, one comprehension each (cheaper than an append per column per trace)
        self.trace_ids = [u.trace_id for u in units]
        self.run_ids = [u.run_id for u in units]
        self.case_ids = [u.case_id for u in units]
        self.repeats = [u.repeat_index if u.case_id else None for u in units]
        self.domains = [u.domain for u in units]
        self.seqs = [u.seq for u in units]
        try:
            return self._tables()
        except UnicodeEncodeError:  # a lone surrogate (a decoded JSON "\ud800") in a value or message
            for name, value in vars(self).items():
                if isinstance(value, list) and name != "units":
                    setattr(self, name, utf8_deep(value))
            return self._tables()

    def _tables(self) -> ResultTables:
        n = len(self.trace_ids)
        trace_ids = pa.array(self.trace_ids, _S)
        run_ids, case_ids = pa.array(self.run_ids, _S), pa.array(self.case_ids, _S)
        repeats = pa.array(self.repeats, _I)
        version = pa.array([self.version], _S)

        # trace_results: the trace's identity, and its verdict's columns taken per trace
        distinct = _transpose(self.verdict_rows, 8)
        verdict_of = pa.array(self.verdict_of, _I)
        dimension, verdict, cls, settled_at, settled_by, explanation, evidence, reason = (
            pa.array(col, t).take(verdict_of)
            for col, t in zip(distinct, (_S, _S, _S, _I, _S, _S, _S, _S), strict=True)
        )
        traces = pa.table(
            [
                trace_ids, run_ids, case_ids, repeats, dimension, pa.array(self.domains, _S), verdict, cls,
                settled_at, settled_by, explanation, evidence, _repeat(version, n),
                pa.repeat(pa.scalar(self.now, pa.timestamp("us")), n),
                pa.array(self.seqs, pa.int64()), pa.array(self.weights, pa.float64()), reason,
            ],
            schema=TRACE_RESULT_SCHEMA,
        )  # fmt: skip

        # rung_results and findings: each distinct verdict's rows, once per trace that has it
        rung_ref, rung_owner = _expand(self.verdict_of, self.rung_span)
        rung_take = pa.array(self.rung_refs, _I).take(rung_ref)
        rung, name, status, rung_explanation = _transpose(self.rung_rows, 4)
        scores = pa.MapArray.from_arrays(
            pa.array(self.score_offsets, _I),
            pa.array(self.score_keys, _S),
            pa.array(self.score_values, pa.float64()),
        )
        rungs = pa.table(
            [
                trace_ids.take(rung_owner), pa.array(rung, _I).take(rung_take),
                pa.array(name, _S).take(rung_take),
                pa.array(status, _S).take(rung_take), scores.take(rung_take),
                pa.array(rung_explanation, _S).take(rung_take), _repeat(version, len(rung_take)),
            ],
            schema=RUNG_RESULT_SCHEMA,
        )  # fmt: skip
        finding_take, finding_owner = _expand(self.verdict_of, self.finding_span)
        f_rung, code, tool, param, expected, actual, message, ordinal, f_name = _transpose(
            self.finding_rows, 9
        )
        findings = pa.table(
            [
                run_ids.take(finding_owner), case_ids.take(finding_owner), repeats.take(finding_owner),
                trace_ids.take(finding_owner), pa.array(f_rung, _I).take(finding_take),
                pa.array(code, _S).take(finding_take), pa.array(tool, _S).take(finding_take),
                pa.array(param, _S).take(finding_take), pa.array(expected, _S).take(finding_take),
                pa.array(actual, _S).take(finding_take), pa.array(message, _S).take(finding_take),
                pa.array(ordinal, _I).take(finding_take), _repeat(version, len(finding_take)),
                pa.array(f_name, _S).take(finding_take),
            ],
            schema=FINDING_SCHEMA,
        )  # fmt: skip
        return ResultTables(traces, rungs, findings)

    def _evidence(self, case: Case | None, v: Verdict, encode: Callable[[Any], str]) -> str:
        golden = "[]"
        if case is not None:  # once per case, by the stdlib encoder: a case's values may be NaN too
            golden = self._golden.get(case.id) or self._golden.setdefault(case.id, _stdlib(_golden(case)))
        checks = {r.name: _checks(r) for r in v.rungs if r.status == "fail" and r.checks}
        rest = encode({"ignored_ordinals": list(v.ignored), "checks": checks})
        return '{"golden":' + golden + "," + rest[1:]


def _nonfinite_values(v: Verdict) -> bool:
    """Whether a value this verdict's rows write (a finding's or an argument diff's expected and
    actual values) holds a NaN or an infinity. A string, integer or None — most values — is
    answered by its type alone, before any call."""
    finite = _FINITE_TYPES
    for r in v.rungs:
        for f in r.findings:
            expected, actual = f[5], f[6]  # f.expected, f.actual (by index: the hot path)
            if (type(expected) not in finite and _has_nonfinite(expected)) or (
                type(actual) not in finite and _has_nonfinite(actual)
            ):
                return True
        if r.status == "fail":
            for c in r.checks:
                for d in c.diffs:
                    if _has_nonfinite(d.expected) or _has_nonfinite(d.actual):
                        return True
    return False


def _expand(owner_of: list[int], spans: list[tuple[int, int]]) -> tuple[pa.Array, pa.Array]:
    """For per-trace owners and per-owner [start, end) row spans: the row indices to take, and
    for each taken row the index of the trace it belongs to. The spans are consecutive (each
    owner's rows follow the previous owner's), so they are the lists of one list array: taking
    an owner's list per trace and flattening gives the rows, in C, not a Python loop per trace."""
    if not spans:
        return pa.array([], _I), pa.array([], _I)
    offsets = pa.array([spans[0][0], *(end for _, end in spans)], _I)
    rows = pa.ListArray.from_arrays(offsets, pa.array(range(spans[0][0], spans[-1][1]), _I))
    taken = rows.take(pa.array(owner_of, _I))
    return taken.flatten(), pc.list_parent_indices(taken).cast(_I)


def _repeat(value: pa.Array, n: int) -> pa.Array:
    """The one value of `value`, n times (built in C, not from a list of n indices)."""
    return pa.repeat(value[0], n)


def _transpose(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """Row tuples → column lists, transposed once in C rather than appended cell by cell."""
    return [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in range(width)]


def _golden(case: Case) -> list[dict[str, Any]]:
    return [{"tool": c.tool, "params": c.params, "param_rules": c.param_rules} for c in case.calls]


def _checks(r: RungResult) -> list[dict[str, Any]]:
    # checks and diffs are named tuples, unpacked once each (the hot path of a failing trace)
    return [
        {
            "status": status,
            "expected_tool": expected_tool,
            "actual_tool": actual_tool,
            "actual_ordinal": actual_ordinal,
            "code": code,
            "message": message,
            "diffs": [
                {"param": param, "expected": expected, "actual": actual, "rule": rule, "code": diff_code}
                for param, expected, actual, rule, diff_code in diffs
            ],
        }  # fmt: skip
        for status, _, expected_tool, actual_ordinal, actual_tool, code, diffs, message in r.checks
    ]
