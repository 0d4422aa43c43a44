"""The floor of `settle`: the simplest fast way to do, per trace, what the ladder must do — as one
tight Python loop with nothing else — measured on the same traces as the real thing (issue 36,
point 3; decision 710).

Per trace, from the same call table `settle_batch` takes to the same three Arrow tables:
parse each call's arguments (`json.loads`), check them against the tool's compiled schema (the
project's own compiled validator, errors enumerated for an invalid call), pair the golden calls
with the actual calls by name (greedy, first unused call of that name: the optimal assignment is
our structure, not the floor's), compare the golden arguments, let whitelisted reads go, score
the trajectory (exact, in order, any order, recall, precision) and partial credit, fold a verdict,
and build a trace row, seven rung rows and the findings as tuples turned into Arrow columns.

What it leaves out is what the ladder adds on top of the minimum: evidence (checks, diffs,
explanations a person reads), per-parameter failure classes, state and chain checks, plug-in rungs,
the not-evaluated paths. So its verdicts are close to, not equal to, the ladder's (both counts are
printed); it is a lower bound on the Python work per trace, not a second evaluator.

`floor_settle(units, call_table, domain)` → CPU µs per trace, judging every trace, and judging
each distinct trace once (the part that is constant per distinct input: a trace whose calls and
case equal another's costs a dictionary lookup and its rows).

Not a script of its own (no `__main__`, no `--smoke` of its own): `bench/evaluate_throughput.py`
calls `report_floor` on the traces it has just evaluated, so the floor runs wherever that script
runs — in `make bench`, and at its `--smoke` size in tests/project/test_bench_smoke.py, whose run
prints `settle_floor_us_per_trace` and the `settle floor` measures.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from traceladder.evaluate.rungs.untrusted_schema import compile_schema
from traceladder.suite.cases import load_cases

# the ladder's seven rungs, in its order (`rungs.ladder.BUILTIN` sorted by tier)
_RUNGS = ((1, "schema"), (1, "invariants"), (2, "call_match"), (3, "trajectory"), (4, "partial_credit"),
          (4, "state"), (5, "judge"))  # fmt: skip


def _judge_trace(calls, case, validators, whitelist, read_only):
    """(verdict, failure class, per-rung (status, score), findings) of one trace: the minimum."""
    findings: list[tuple[int, str, str, str | None]] = []
    parsed: list[tuple[str, Any, bool]] = []
    for tool, raw, ok, _result, _ordinal in calls:
        try:
            args = json.loads(raw) if raw is not None else {}
        except ValueError:
            findings.append((1, "PARAM_WRONG_FORMAT", tool, "arguments are not JSON"))
            parsed.append((tool, None, False))
            continue
        validator = validators.get(tool)
        if validator is None:
            findings.append((1, "UNKNOWN_TOOL", tool, None))
            parsed.append((tool, args, False))
        elif validator.is_valid(args):
            parsed.append((tool, args, ok))
        else:
            message = "; ".join(e.message for e in validator.iter_errors(args))
            findings.append((1, "PARAM_WRONG_FORMAT", tool, message))
            parsed.append((tool, args, False))
    schema_ok = not findings
    # pairing by name: each golden call takes the first unused actual call of its tool
    used = [False] * len(parsed)
    full = partial = 0
    for expected in case.calls:
        for j, (tool, args, _valid) in enumerate(parsed):
            if used[j] or tool != expected.tool:
                continue
            used[j] = True
            if isinstance(args, dict) and all(args.get(k) == v for k, v in expected.params.items()):
                full += 1
            else:
                partial += 1
                findings.append((2, "PARAM_VALUE_WRONG", tool, None))
            break
        else:
            findings.append((2, "CALL_MISSING", expected.tool, None))
    judged = []
    for j, (tool, _args, valid) in enumerate(parsed):
        if used[j]:
            judged.append(tool)
        elif not (valid and tool in read_only and tool in whitelist):
            judged.append(tool)
            findings.append((2, "CALL_EXTRA", tool, None))
    golden = [c.tool for c in case.calls]
    n_golden, n_judged = len(golden), len(judged)
    it = iter(judged)
    in_order = all(name in it for name in golden)
    any_order = Counter(golden) <= Counter(judged)
    trajectory = (float(judged == golden), float(in_order), float(any_order),
                  full / n_golden if n_golden else 1.0, full / n_judged if n_judged else 1.0)  # fmt: skip
    longer = max(n_golden, n_judged)
    credit = (full + 0.5 * partial) / longer if longer else 1.0
    match_ok = not any(f[0] == 2 for f in findings)
    statuses = (
        ("pass" if schema_ok else "fail", 1.0),
        ("pass", 1.0),  # invariants: none in this workload
        ("pass" if match_ok else "fail", full / n_golden if n_golden else 1.0),
        ("pass" if trajectory[2] == 1.0 else "fail", trajectory[0]),
        ("pass" if credit == 1.0 else "fail", credit),
        ("not_evaluated", 0.0),  # state: no end state recorded
        ("skipped" if findings else "not_evaluated", 0.0),  # judge: none configured
    )
    failed = findings[0][1] if findings else None
    return ("FAIL" if findings else "PASS", failed, statuses, findings)


def floor_settle(units: list[Any], call_table: pa.Table, domain: Any) -> dict[str, Any]:
    """CPU µs per trace of the floor judging every trace (`every`) and each distinct trace once
    (`distinct_once`), the number of distinct traces, and the floor's verdict counts."""
    cases = {c.id: c for c in load_cases()}
    validators = {name: compile_schema(s, trusted=True) for name, s in domain.tool_schemas.items()}
    whitelist, read_only = frozenset(domain.default_whitelist), frozenset(domain.read_only_tools)
    out: dict[str, Any] = {}
    for mode in ("every", "distinct_once"):
        t = time.process_time()
        by_trace: dict[str, list[tuple[str, str | None, bool, str | None, int]]] = {}
        cols = [call_table.column(i).to_pylist() for i in range(call_table.num_columns)]
        for trace_id, ordinal, tool, raw, status, result in zip(*cols, strict=True):
            by_trace.setdefault(trace_id, []).append((tool, raw, status == "ok", result, ordinal))
        if mode == "every":
            tables, verdicts, distinct = _every(units, by_trace, cases, validators, whitelist, read_only)
        else:
            tables, verdicts, distinct = _once(units, by_trace, cases, validators, whitelist, read_only)
            out["distinct"] = distinct
        out[mode] = (time.process_time() - t) / len(units) * 1e6
        out["verdicts"] = dict(Counter(verdicts))
        out["rows"] = sum(tb.num_rows for tb in tables)
    return out


def _table(rows: list[tuple[Any, ...]], names: tuple[str, ...]) -> pa.Table:
    columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in names]
    return pa.table(dict(zip(names, columns, strict=True)))


_TRACE, _RUNG, _FINDING = ("tid", "run", "case", "verdict", "class"), ("rung", "name", "status", "score"), (
    "rung", "code", "tool", "message")  # fmt: skip


def _every(units, by_trace, cases, validators, whitelist, read_only):
    """Every trace judged, its rows built as tuples, then turned into columns."""
    trace_rows, rung_rows, finding_rows = [], [], []
    for unit in units:
        tid = unit.trace_id
        verdict, failure_class, statuses, findings = _judge_trace(
            by_trace.get(tid, []), cases[unit.case_id], validators, whitelist, read_only
        )
        trace_rows.append((tid, unit.run_id, unit.case_id, verdict, failure_class))
        for (number, name), (status, score) in zip(_RUNGS, statuses, strict=True):
            rung_rows.append((tid, number, name, status, score))
        for finding in findings:
            finding_rows.append((tid, *finding))
    tables = [_table(trace_rows, _TRACE), _table(rung_rows, ("tid", *_RUNG)),
              _table(finding_rows, ("tid", *_FINDING))]  # fmt: skip
    return tables, [row[3] for row in trace_rows], len(units)


def _once(units, by_trace, cases, validators, whitelist, read_only):
    """Each distinct trace (case and calls as recorded) judged once and its rows built once; per
    trace only its identity and the index of its verdict, every row taken per trace in Arrow."""
    index: dict[Any, int] = {}
    verdict_rows, rung_rows, finding_rows, finding_offsets = [], [], [], [0]
    ids, runs, case_ids, of = [], [], [], []
    for unit in units:
        calls = by_trace.get(unit.trace_id, [])
        key = (unit.case_id, tuple(calls))
        k = index.get(key)
        if k is None:
            k = index[key] = len(verdict_rows)
            verdict, failure_class, statuses, findings = _judge_trace(
                calls, cases[unit.case_id], validators, whitelist, read_only
            )
            verdict_rows.append((verdict, failure_class))
            rung_rows += [(n, name, st, sc) for (n, name), (st, sc) in zip(_RUNGS, statuses, strict=True)]
            finding_rows += findings
            finding_offsets.append(len(finding_rows))
        ids.append(unit.trace_id)
        runs.append(unit.run_id)
        case_ids.append(unit.case_id)
        of.append(k)
    take = pa.array(of, pa.int32())
    tid = pa.array(ids, pa.string())
    verdicts = _table(verdict_rows, ("verdict", "class")).take(take)
    traces = pa.table({"tid": tid, "run": pa.array(runs, pa.string()), "case": pa.array(case_ids, pa.string()),
                       "verdict": verdicts["verdict"], "class": verdicts["class"]})  # fmt: skip
    width = len(_RUNGS)
    per_rung = pa.ListArray.from_arrays(
        pa.array(range(0, len(rung_rows) + 1, width), pa.int32()), pa.array(range(len(rung_rows)), pa.int32())
    ).take(take)
    rungs = _table(rung_rows, _RUNG).take(per_rung.flatten())
    rungs = rungs.append_column("tid", tid.take(pc.list_parent_indices(per_rung)))
    per_finding = pa.ListArray.from_arrays(
        pa.array(finding_offsets, pa.int32()), pa.array(range(len(finding_rows)), pa.int32())
    ).take(take)
    findings = _table(finding_rows, _FINDING).take(per_finding.flatten())
    findings = findings.append_column("tid", tid.take(pc.list_parent_indices(per_finding)))
    return [traces, rungs, findings], traces["verdict"].to_pylist(), len(verdict_rows)


def report_floor(units: list[Any], call_table: pa.Table, domain: Any, settle_us: float) -> dict[str, Any]:
    """Print the floor beside the ladder's settle (same traces, same process)."""
    floor = floor_settle(units, call_table, domain)
    print(
        f"settle_floor_us_per_trace={floor['every']:.1f} (every trace judged; a tight loop: parse, "
        f"validate, pair by name, score, fold, rows) distinct_once={floor['distinct_once']:.1f} "
        f"(each of {floor['distinct']:,} distinct of {len(units):,} traces judged once) "
        f"floor_verdicts={json.dumps(floor['verdicts'], sort_keys=True)}"
    )
    print(
        f"settle_vs_floor={settle_us / floor['distinct_once']:.2f}x (ladder {settle_us:.1f} µs against the "
        f"floor with the same dedupe {floor['distinct_once']:.1f}); against the floor judging every "
        f"trace {settle_us / floor['every']:.2f}x"
    )
    return floor
