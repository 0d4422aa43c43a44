"""ReportV1: the summary and per-case evidence of one run, built from stored results.

Pure: takes rows, returns a dict. It never re-judges — verdicts, classes and diffs come from the
`results` / `findings` rows the evaluator wrote. Summary field names follow seed 1's ReportV1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

VERDICTS = ("PASS", "FAIL", "SKIP", "AGENT_ERROR")
DIMENSIONS = ("D1", "D2", "D3", "D4")
RUNG_SCORES = (
    "rung1_score",
    "rung2_recall",
    "rung2_precision",
    "rung3_strict",
    "rung3_unordered",
    "rung3_subset",
    "rung3_superset",
    "rung4_positional",
    "rung4_optimal",
)


def accuracy_of(counts: Mapping[str, int]) -> float | None:
    """PASS / (PASS + FAIL), exactly; None when nothing was scored (SKIP, AGENT_ERROR excluded)."""
    scored = counts.get("PASS", 0) + counts.get("FAIL", 0)
    return counts.get("PASS", 0) / scored if scored else None


def _accuracy(counts: Mapping[str, int]) -> float | None:
    exact = accuracy_of(counts)
    return None if exact is None else round(exact, 4)  # for display; the gate uses the exact value


def _block(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counts = Counter(r["verdict"] for r in rows)
    verdict_counts = {v: counts.get(v, 0) for v in VERDICTS}
    return {
        "case_count": len(rows),
        "verdict_counts": verdict_counts,
        "scored_count": verdict_counts["PASS"] + verdict_counts["FAIL"],
        "accuracy": _accuracy(verdict_counts),
    }


def build_report(
    run: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    findings: Sequence[Mapping[str, Any]],
    calls: Mapping[str, Sequence[Mapping[str, Any]]],
    known_tools: Sequence[str],
) -> dict[str, Any]:
    """`results`/`findings`: rows of those tables for the run; `calls`: tool calls by trace id."""
    summary = _block(results)
    summary["dimensions"] = {d: _block([r for r in results if r["dimension"] == d]) for d in DIMENSIONS}
    failed = [r for r in results if r["verdict"] == "FAIL"]
    taxonomy = Counter(r["failure_class"] for r in failed)
    summary["taxonomy_counts"] = dict(sorted(taxonomy.items(), key=lambda kv: (-kv[1], kv[0])))
    summary["top_failures"] = [
        {
            "failure_class": cls,
            "count": n,
            "cases": sorted({r["case_id"] for r in failed if r["failure_class"] == cls}),
        }
        for cls, n in sorted(taxonomy.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    ]
    failed_keys = {(r["case_id"], r["repeat_index"]) for r in failed}
    implicated: dict[str, set[tuple[str, int]]] = {}
    for f in findings:
        key = (f["case_id"], f["repeat_index"])
        if key in failed_keys and f["tool"] in known_tools:
            implicated.setdefault(f["tool"], set()).add(key)
    worst = sorted(((tool, len(keys)) for tool, keys in implicated.items()), key=lambda kv: (-kv[1], kv[0]))
    summary["worst_tools"] = dict(worst)
    summary["top_worst_tools"] = [{"tool": t, "fail_cases": n} for t, n in worst[:5]]
    scored = [r for r in results if r["verdict"] in ("PASS", "FAIL")]
    summary["mean_rung_scores"] = {
        key: round(fmean(values), 4) if (values := [r[key] for r in scored if r[key] is not None]) else None
        for key in RUNG_SCORES
    }
    summary["settled_at_counts"] = dict(sorted(Counter(str(r["settled_at"]) for r in failed).items()))
    by_case: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for f in findings:
        by_case.setdefault((f["case_id"], f["repeat_index"]), []).append(f)
    per_case = []
    for r in results:
        evidence = r["evidence"] or {}
        per_case.append(
            {
                "case_id": r["case_id"],
                "repeat_index": r["repeat_index"],
                "dimension": r["dimension"],
                "trace_id": r["trace_id"],
                "verdict": r["verdict"],
                "taxonomy": r["failure_class"],
                "settled_at": r["settled_at"],
                "explanation": r["explanation"],
                "golden": evidence.get("golden", []),
                "actual": [dict(c) for c in calls.get(r["trace_id"], [])],
                "findings": [
                    {k: f[k] for k in ("rung", "code", "tool", "param", "expected", "actual", "message")}
                    for f in by_case.get((r["case_id"], r["repeat_index"]), [])
                ],
                "rungs": evidence.get("rungs", []),
            }
        )
    return {"schema": "ReportV1", "run": dict(run), "summary": summary, "results": per_case}
