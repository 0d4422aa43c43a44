"""ReportV1: the summary and per-trace evidence of one run, built from stored results.

Pure: takes rows, returns a dict. It never re-judges — verdicts, classes and diffs come from the
rows the evaluation layer wrote. Summary field names follow seed 1's ReportV1; `ladder` (which
rung settled how many traces) and `mean_rung_scores` (keyed `rung_name.score`) come from the
long-form rung results, so a new rung appears without a code change here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from traceladder.evaluators.types import VERDICTS


def accuracy_of(counts: Mapping[str, int]) -> float | None:
    """PASS / (PASS + FAIL), exactly; None when nothing was scored (SKIP, AGENT_ERROR and
    NOT_EVALUATED are excluded)."""
    scored = counts.get("PASS", 0) + counts.get("FAIL", 0)
    return counts.get("PASS", 0) / scored if scored else None


def _accuracy(counts: Mapping[str, int]) -> float | None:
    exact = accuracy_of(counts)
    return None if exact is None else round(exact, 4)  # for display; the gate uses the exact value


def _block(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counts = Counter(r["verdict"] for r in rows)
    # Seed 1's four verdicts always; NOT_EVALUATED (traces no rung could judge) only when present.
    verdict_counts = {v: counts.get(v, 0) for v in VERDICTS if v != "NOT_EVALUATED" or counts.get(v)}
    return {
        "case_count": len(rows),
        "verdict_counts": verdict_counts,
        "scored_count": verdict_counts["PASS"] + verdict_counts["FAIL"],
        "accuracy": _accuracy(verdict_counts),
    }


def _ladder(results: Sequence[Mapping[str, Any]], rungs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per rung, in ladder order: how many traces it judged, passed, failed — and settled (the
    first failing rung settles a FAIL; the highest rung that ran settles a PASS)."""
    order: dict[str, int] = {}
    statuses: dict[str, Counter[str]] = {}
    for r in rungs:
        order.setdefault(r["rung_name"], r["rung"])
        statuses.setdefault(r["rung_name"], Counter())[r["status"]] += 1
    settled = Counter((r["settled_by"], r["verdict"]) for r in results if r.get("settled_by"))
    return [
        {
            "rung": order[name],
            "name": name,
            "statuses": dict(sorted(statuses[name].items())),
            "settled_fail": settled.get((name, "FAIL"), 0),
            "settled_pass": settled.get((name, "PASS"), 0),
        }
        for name in sorted(order, key=lambda n: (order[n], n))
    ]


def build_report(
    run: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    rungs: Sequence[Mapping[str, Any]],
    findings: Sequence[Mapping[str, Any]],
    calls: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    dimensions: Sequence[str] = (),
    known_tools: Sequence[str] = (),
) -> dict[str, Any]:
    """`results`/`rungs`/`findings`: rows of those tables for the run; `calls`: tool calls by trace
    id. `dimensions` orders the per-dimension blocks (default: those present); `known_tools`
    limits the worst-tools list to real tools (default: any tool named in a failure)."""
    summary = _block(results)
    present = sorted({r["dimension"] for r in results if r["dimension"]})
    order = [d for d in dimensions if d in present] + [d for d in present if d not in dimensions]
    summary["dimensions"] = {d: _block([r for r in results if r["dimension"] == d]) for d in order}
    failed = [r for r in results if r["verdict"] == "FAIL"]
    taxonomy = Counter(r["failure_class"] for r in failed)
    summary["taxonomy_counts"] = dict(sorted(taxonomy.items(), key=lambda kv: (-kv[1], str(kv[0]))))
    summary["top_failures"] = [
        {
            "failure_class": cls,
            "count": n,
            "cases": sorted({r["case_id"] or r["trace_id"] for r in failed if r["failure_class"] == cls}),
        }
        for cls, n in sorted(taxonomy.items(), key=lambda kv: (-kv[1], str(kv[0])))[:5]
    ]
    failed_traces = {r["trace_id"] for r in failed}
    implicated: dict[str, set[str]] = {}
    for f in findings:
        if f["trace_id"] in failed_traces and f["tool"] and (not known_tools or f["tool"] in known_tools):
            implicated.setdefault(f["tool"], set()).add(f["trace_id"])
    worst = sorted(((tool, len(keys)) for tool, keys in implicated.items()), key=lambda kv: (-kv[1], kv[0]))
    summary["worst_tools"] = dict(worst)
    summary["top_worst_tools"] = [{"tool": t, "fail_cases": n} for t, n in worst[:5]]
    scored = {r["trace_id"] for r in results if r["verdict"] in ("PASS", "FAIL")}
    values: dict[str, list[float]] = {}
    for r in rungs:
        if r["trace_id"] in scored:
            for key, value in (r["scores"] or {}).items():
                if value is not None:
                    values.setdefault(f"{r['rung_name']}.{key}", []).append(value)
    summary["mean_rung_scores"] = {key: round(fmean(v), 4) for key, v in values.items()}
    summary["settled_at_counts"] = dict(sorted(Counter(str(r["settled_at"]) for r in failed).items()))
    summary["ladder"] = _ladder(results, rungs)
    by_trace: dict[str, list[Mapping[str, Any]]] = {}
    for f in findings:
        by_trace.setdefault(f["trace_id"], []).append(f)
    rungs_of: dict[str, list[Mapping[str, Any]]] = {}
    for r in rungs:
        rungs_of.setdefault(r["trace_id"], []).append(r)
    per_case = []
    for r in results:
        evidence = r["evidence"] or {}
        per_case.append(
            {
                "case_id": r["case_id"],
                "repeat_index": r["repeat_index"] or 0,
                "dimension": r["dimension"],
                "trace_id": r["trace_id"],
                "verdict": r["verdict"],
                "taxonomy": r["failure_class"],
                "settled_at": r["settled_at"],
                "settled_by": r.get("settled_by"),
                "explanation": r["explanation"],
                "golden": evidence.get("golden", []),
                "actual": [dict(c) for c in calls.get(r["trace_id"], [])],
                "findings": [
                    {k: f[k] for k in ("rung", "code", "tool", "param", "expected", "actual", "message")}
                    for f in by_trace.get(r["trace_id"], [])
                ],
                "rungs": _rungs(rungs_of.get(r["trace_id"], []), evidence),
            }
        )
    return {"schema": "ReportV1", "run": dict(run), "summary": summary, "results": per_case}


def _rungs(rows: Sequence[Mapping[str, Any]], evidence: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per rung, in ladder order: status, scores and explanation from `rung_results`, plus the
    checks (with argument diffs) the evidence keeps for a rung that did not pass."""
    checks = evidence.get("checks") or {}
    out = []
    for row in sorted(rows, key=lambda g: (g["rung"], g["rung_name"])):
        rung: dict[str, Any] = {
            "rung": row["rung"],
            "name": row["rung_name"],
            "status": row["status"],
            "scores": dict(row["scores"] or {}),
            "explanation": row["explanation"],
        }
        if row["rung_name"] in checks:
            rung["checks"] = checks[row["rung_name"]]
        out.append(rung)
    return out
