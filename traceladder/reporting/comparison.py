"""ComparisonV1: model (or prompt, or configuration) A against B on the same suite. Pure: ReportV1
dicts in, one plain dict out — `traceladder compare` prints it, `report --format html --compare`
renders the same dict, so the two can never show different numbers.

A side is one run or a group of runs of one model (e.g. the three runs a baseline was locked
from); its trials of a case are its results for that case in run order, then repeat order. Only
cases both sides tried are compared (`only_a`, `only_b` count the rest). Per case the paired
outcome is `paired.pair` (pass^k-style: all of the first k scored trials passed); McNemar's exact
test runs on those. Pass rates are the reports' own, PASS / (PASS + FAIL) over the trials of the
compared cases, with Wilson's 95% interval; failure classes count FAIL trials. Verdicts, classes
and evidence are the reports' — never re-judged here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from traceladder.evaluators.types import VerdictValue as V
from traceladder.live.stats import wilson
from traceladder.reporting.paired import UNSCORED, McNemar, PairedOutcome, mcnemar, pair

Side = Sequence[Mapping[str, Any]]  # the ReportV1s of one side, in order

# The one input hash two runs must share to be compared at all: the same cases. The others
# (prompt, tool schemas, run configuration) may differ — that is what a comparison measures.
SAME_SUITE_KEY = "cases"


def trials(side: Side) -> dict[str, list[Mapping[str, Any]]]:
    """case id → its results on this side, in run order then repeat order. Traces without a case
    (live traffic) have nothing to pair with and are left out."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for report in side:
        for result in sorted(report["results"], key=lambda r: (str(r["case_id"]), r["repeat_index"] or 0)):
            if result["case_id"]:
                out.setdefault(result["case_id"], []).append(result)
    return out


def _rate(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counts = Counter(r["verdict"] for r in results)
    passed, n = counts[V.PASS], counts[V.PASS] + counts[V.FAIL]
    low, high = wilson(passed, n)
    return {"passed": passed, "scored": n, "rate": passed / n if n else None, "interval": [low, high]}


def _delta(a: Mapping[str, Any], b: Mapping[str, Any]) -> float | None:
    return None if a["rate"] is None or b["rate"] is None else b["rate"] - a["rate"]


def _side_block(side: Side, per_case: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    runs = [r["run"] for r in side]
    results = [r for rs in per_case.values() for r in rs]
    version = (runs[0].get("input_hashes") or {}).get("agent_version")
    return {
        "runs": [r["run_id"] for r in runs],
        "model": runs[0]["model"],
        **({"agent_version": version} if version else {}),  # an agent under test's runs only
        "trials_per_case": sorted({len(scored_results(rs)) for rs in per_case.values()}),
        **_rate(results),
    }


def _evidence(results: Sequence[Mapping[str, Any]], k: int) -> dict[str, Any] | None:
    """Why a side failed a case: its first failing trial among the k compared."""
    failing = next((r for r in scored_results(results)[:k] if r["verdict"] != V.PASS), None)
    if failing is None:
        return None
    finding = next(iter(failing.get("findings") or ()), None)
    return {
        "trace_id": failing["trace_id"],
        "repeat_index": failing["repeat_index"],
        "verdict": failing["verdict"],
        "failure_class": failing.get("taxonomy"),
        "explanation": failing.get("explanation"),
        "finding": dict(finding) if finding else None,
    }


def scored_results(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The results whose verdict counts as a trial (see `paired.scored`), in order."""
    return [r for r in results if r["verdict"] not in UNSCORED]


def differences(a: Side, b: Side) -> list[str]:
    """What differs between the two sides' first runs: the model, then each input hash by name."""
    ra, rb = a[0]["run"], b[0]["run"]
    found = ["model"] if ra["model"] != rb["model"] else []
    ha, hb = ra.get("input_hashes") or {}, rb.get("input_hashes") or {}
    found += [key for key in sorted(set(ha) | set(hb)) if key != "inputs" and ha.get(key) != hb.get(key)]
    if ra.get("evaluator_version") != rb.get("evaluator_version"):
        found.append("evaluator_version")
    return found


def _test_block(test: McNemar) -> dict[str, Any]:
    if test.b_worse:
        conclusion = "B is significantly worse than A"
    elif test.b_better:
        conclusion = "B is significantly better than A"
    else:
        conclusion = "no significant difference"
    return {
        "both_pass": test.both_pass, "b": test.b, "c": test.c, "both_fail": test.both_fail,
        "pairs": test.pairs, "p_value": test.p_value, "alpha": test.alpha,
        "significant": test.significant, "b_worse": test.b_worse, "conclusion": conclusion,
    }  # fmt: skip


def compare_sides(
    a: Side, b: Side, *, alpha: float = 0.05, dimensions: Mapping[str, str] | Sequence[str] = ()
) -> dict[str, Any]:
    """The ComparisonV1 of side `a` (the reference) and side `b` (the candidate). `dimensions`:
    the suite's, in its order (others present follow, sorted), with their names when a mapping
    (each row's `title`: what the suite means by the code, or null)."""
    names = dimensions if isinstance(dimensions, Mapping) else {}
    ta, tb = trials(a), trials(b)
    outcomes: dict[str, PairedOutcome] = {}
    for case_id in sorted(ta.keys() & tb.keys()):
        outcome = pair([r["verdict"] for r in ta[case_id]], [r["verdict"] for r in tb[case_id]])
        if outcome is not None:
            outcomes[case_id] = outcome
    dimension_of = {c: (ta[c][0].get("dimension") or "") for c in outcomes}
    a_results = [r for c in outcomes for r in ta[c]]
    b_results = [r for c in outcomes for r in tb[c]]
    test = mcnemar(list(outcomes.values()), alpha)
    present = sorted({d for d in dimension_of.values() if d} - set(dimensions))
    rows = []
    for name in ["all", *[d for d in dimensions if d in dimension_of.values()], *present]:
        cases = [c for c in outcomes if name == "all" or dimension_of[c] == name]
        ra = _rate([r for c in cases for r in ta[c]])
        rb = _rate([r for c in cases for r in tb[c]])
        rows.append({
            "dimension": name, "title": names.get(name), "a": ra, "b": rb, "delta": _delta(ra, rb),
            "cases": len(cases),
            "regressed": sum(1 for c in cases if outcomes[c].a_pass and not outcomes[c].b_pass),
            "improved": sum(1 for c in cases if not outcomes[c].a_pass and outcomes[c].b_pass),
        })  # fmt: skip
    ca = Counter(r.get("taxonomy") or "?" for r in a_results if r["verdict"] == V.FAIL)
    cb = Counter(r.get("taxonomy") or "?" for r in b_results if r["verdict"] == V.FAIL)
    ea = Counter(r["verdict"] for r in a_results)[V.AGENT_ERROR]
    eb = Counter(r["verdict"] for r in b_results)[V.AGENT_ERROR]
    classes = [
        {"failure_class": cls, "a": ca[cls], "b": cb[cls], "delta": cb[cls] - ca[cls]}
        for cls in sorted(ca.keys() | cb.keys(), key=lambda k: (-abs(cb[k] - ca[k]), k))
    ]
    if ea or eb:
        classes.append({"failure_class": V.AGENT_ERROR, "a": ea, "b": eb, "delta": eb - ea})
    flips = []
    for case_id, o in outcomes.items():
        if o.a_pass == o.b_pass:
            continue
        failing_side = tb[case_id] if o.a_pass else ta[case_id]
        flips.append({
            "case_id": case_id, "dimension": dimension_of[case_id] or None, "k": o.k,
            "direction": "regressed" if o.a_pass else "improved",
            "a": V.PASS if o.a_pass else V.FAIL, "b": V.PASS if o.b_pass else V.FAIL,
            "a_verdicts": [r["verdict"] for r in scored_results(ta[case_id])[: o.k]],
            "b_verdicts": [r["verdict"] for r in scored_results(tb[case_id])[: o.k]],
            "evidence": _evidence(failing_side, o.k),
        })  # fmt: skip
    flips.sort(key=lambda f: (f["direction"] != "regressed", f["case_id"]))
    return {
        "schema": "ComparisonV1",
        "a": _side_block(a, {c: ta[c] for c in outcomes}),
        "b": _side_block(b, {c: tb[c] for c in outcomes}),
        "k": sorted({o.k for o in outcomes.values()}),
        "differs": differences(a, b),
        "paired_cases": len(outcomes),
        "only_a": sorted(ta.keys() - tb.keys()),
        "only_b": sorted(tb.keys() - ta.keys()),
        "unpaired": sorted((ta.keys() & tb.keys()) - outcomes.keys()),
        "mcnemar": _test_block(test),
        "dimensions": rows,
        "classes": classes,
        "flips": flips,
    }
