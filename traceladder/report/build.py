"""ReportV1: the summary and per-trace evidence of one run, built from stored results.

Pure: takes rows, returns a dict. It never re-judges — verdicts, classes and diffs come from the
rows the evaluation layer wrote. The shape is seed 1's ReportV1, published as
`traceladder/schemas/report-v1.schema.json` and documented in docs/report-contract.md; `ladder`
(which rung settled how many traces) and `mean_rung_scores` (keyed `rung_name.score`) come from
the long-form rung results, so a new rung appears without a code change here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from traceladder.evaluate.rungs.types import SCORED, VERDICTS, VerdictValue
from traceladder.report.documents import (
    ActualCall,
    Block,
    DiffEntry,
    FindingEntry,
    JudgeBlock,
    LadderRow,
    ReportV1,
    Result,
    RunBlock,
    RungEntry,
    Summary,
    VerdictCounts,
    WarningEntry,
)  # fmt: skip

if TYPE_CHECKING:  # types only: building a report never imports DuckDB
    from traceladder.store.readers import RunRows
    from traceladder.store.report_summary import Aggregates

# The run block, always with these keys (null when unknown: traces that came from elsewhere).
RUN_FIELDS = (
    "run_id", "suite", "domain", "model", "provider", "base_url_host", "config", "input_hashes", "selection",
    "cases_total", "started_at", "finished_at", "status", "evaluator_version",
)  # fmt: skip


def accuracy_of(counts: Mapping[str, int]) -> float | None:
    """PASS / (PASS + FAIL), exactly; None when nothing was scored (SKIP, AGENT_ERROR and
    NOT_EVALUATED are excluded)."""
    scored = sum(counts.get(v, 0) for v in SCORED)
    return counts.get(VerdictValue.PASS, 0) / scored if scored else None


def dimension_label(code: str, names: Mapping[str, str | None] | None) -> str:
    """How every renderer names a dimension: `D1 tool selection` when the suite names it (`names`:
    a summary's `dimension_names`), else its code (a report written before reports carried names,
    or traces with no suite)."""
    title = (names or {}).get(code)
    return f"{code} {title}" if title else code


def result_name(result: Mapping[str, Any], *, trace_chars: int | None = 16) -> str:
    """How every renderer names a result: `fc-d1-002`, `fc-d1-002#1` for a repeat,
    `fl-d3-006 turn 2` for a turn of a multi-turn case (each turn its own line, with its own
    verdict), or — for a trace with no case — the first `trace_chars` hex digits of its trace id
    (None: all 32)."""
    name = result["case_id"] or result["trace_id"][:trace_chars]
    name += f"#{result['repeat_index']}" if result.get("repeat_index") else ""
    return name + (f" turn {result['turn'] + 1}" if result.get("turn") is not None else "")


def _block(counts: Mapping[str, int]) -> Block:
    # Seed 1's four verdicts always; NOT_EVALUATED (traces no rung could judge) only when present.
    verdict_counts: VerdictCounts = {
        v: counts.get(v, 0) for v in VERDICTS if v != VerdictValue.NOT_EVALUATED or counts.get(v)
    }
    return {
        "case_count": sum(verdict_counts.values()),
        "verdict_counts": verdict_counts,
        "scored_count": sum(verdict_counts[v] for v in SCORED),
        "accuracy": accuracy_of(verdict_counts),  # exact, as seed 1 defines it
    }


def _ladder(agg: Aggregates) -> list[LadderRow]:
    """Per rung, in ladder order: how many traces it judged, passed, failed — and settled (the
    first failing rung settles a FAIL; the highest rung that ran settles a PASS)."""
    order: dict[str, int] = {}
    statuses: dict[str, Counter[str]] = {}
    for name, rung, status, n in agg.ladder:
        order[name] = min(rung, order.get(name, rung))
        statuses.setdefault(name, Counter())[status] += n
    settled = {(name, verdict): n for name, verdict, n in agg.settled}
    return [
        {
            "rung": order[name],
            "name": name,
            "statuses": dict(sorted(statuses[name].items())),
            "settled_fail": settled.get((name, VerdictValue.FAIL), 0),
            "settled_pass": settled.get((name, VerdictValue.PASS), 0),
        }
        for name in sorted(order, key=lambda n: (order[n], n))
    ]


def judge_block(agg: Aggregates) -> JudgeBlock | None:
    """Rung 5 in numbers: what the judge decided, what it cost, and what the ladder spared it.
    None when no judge ran and none was asked for (rung 5 only ever said "no judge configured")."""
    statuses, j = agg.judge_statuses, agg.judgments
    if j is None and not statuses.get("pass") and not statuses.get("fail"):
        return None
    j = j or {}
    cost = j.get("cost_usd")
    return {
        "model": ", ".join(j.get("models") or ()) or None,
        "survivors": j.get("survivors", 0),
        "judged_pass": statuses.get("pass", 0),
        "judged_fail": statuses.get("fail", 0),
        "judge_calls": j.get("judge_calls", 0),
        "cache_hits": j.get("cache_hits", 0),
        "errors": j.get("errors", 0),
        "over_budget": j.get("over_budget", 0),
        "no_answer": j.get("no_answer", 0),
        "avoided_by_ladder": statuses.get("skipped", 0),
        "input_tokens": int(j.get("input_tokens", 0)),
        "output_tokens": int(j.get("output_tokens", 0)),
        "cost_usd": None if j.get("priced") is False else round(float(cost or 0), 6),
    }


def summary_of(agg: Aggregates, *, dimensions: Mapping[str, str] | Sequence[str] = ()) -> Summary:
    """ReportV1's summary from the SQL aggregates of its traces (`store.report_summary.aggregates`).
    `dimensions` are the suite's dimensions, each given a block even when none of its cases ran
    (default: those present); a mapping also names them (`D1` → "tool selection"), which the
    summary's `dimension_names` carries, because each suite gives its codes its own meaning."""
    totals: Counter[str] = Counter()
    by_dimension: dict[str, Counter[str]] = {}
    for dimension, verdict, n in agg.verdicts:
        totals[verdict] += n
        if dimension:
            by_dimension.setdefault(dimension, Counter())[verdict] += n
    order = list(dimensions) + [d for d in sorted(by_dimension) if d not in dimensions]
    names = dimensions if isinstance(dimensions, Mapping) else {}
    ranked = sorted(agg.classes, key=lambda kv: (-kv[1], str(kv[0])))
    worst = sorted(agg.tools, key=lambda kv: (-kv[1], kv[0]))
    summary: Summary = {  # in the published order: the JSON is written in this key order
        **_block(totals),
        "dimensions": {d: _block(by_dimension.get(d, Counter())) for d in order},
        "dimension_names": {d: names[d] for d in order if d in names},
        "taxonomy_counts": dict(ranked),
        "top_failures": [
            {"failure_class": cls, "count": n, "cases": agg.class_cases.get(cls, [])} for cls, n in ranked[:5]
        ],
        "worst_tools": dict(worst),
        "top_worst_tools": [{"tool": t, "fail_cases": n} for t, n in worst[:5]],
        "mean_rung_scores": {f"{rung}.{key}": round(mean, 4) for rung, key, mean in agg.scores},
        "settled_at_counts": dict(sorted(agg.settled_at)),
        "ladder": _ladder(agg),
    }
    judge = judge_block(agg)
    if judge is not None:
        summary["judge"] = judge
    return summary


def build_report(run: Mapping[str, Any], summary: Summary, results: list[Result]) -> ReportV1:
    """The ReportV1 document: `run`'s block (every `RUN_FIELDS` key), the summary (`summary_of`),
    and the per-trace results (`result_entries`), in report order."""
    return {
        "schema": "ReportV1",
        "run": cast(RunBlock, {key: run.get(key) for key in RUN_FIELDS}),
        "summary": summary,
        "results": results,
    }


def result_entries(rows: RunRows, quirks: Mapping[str, str] | None = None) -> list[Result]:
    """The per-trace results of one batch of rows (`store.run_report.row_batches`): verdict,
    golden and actual calls, warnings, diff, findings and every rung, as ReportV1 states them.
    `quirks`: what each server-quirk name means (`semconv.QUIRKS`; in that order in the warnings)."""
    by_trace: dict[str, list[Mapping[str, Any]]] = {}
    for f in rows.findings:
        by_trace.setdefault(f["trace_id"], []).append(f)
    rungs_of: dict[str, list[Mapping[str, Any]]] = {}
    for g in rows.rungs:
        rungs_of.setdefault(g["trace_id"], []).append(g)
    per_case: list[Result] = []
    for r in rows.results:
        evidence = r["evidence"] or {}
        # the store reads exactly ActualCall's columns (store.run_report), in its order
        actual = [cast(ActualCall, dict(c)) for c in rows.calls.get(r["trace_id"], [])]
        trace_rungs = _rungs(rungs_of.get(r["trace_id"], []), evidence)
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
                # the explanation without the ladder's note (decision 630); NULL when it has none
                "reason": r["explanation"] if r.get("reason") is None else r["reason"],
                "golden": evidence.get("golden", []),
                "actual": actual,
                "warnings": trace_warnings(
                    evidence, actual, rows.requests.get(r["trace_id"], ()), quirks or {}
                ),
                "diff": _diff(trace_rungs),
                "findings": [_finding(f) for f in by_trace.get(r["trace_id"], [])],
                "rungs": trace_rungs,
            }
        )
        if r.get("turn") is not None:  # a turn of a multi-turn case (ReportV1's optional `turn`)
            per_case[-1]["turn"] = r["turn"]
    return per_case


def _finding(row: Mapping[str, Any]) -> FindingEntry:
    return {
        "rung": row["rung"], "code": row["code"], "tool": row["tool"], "param": row["param"],
        "expected": row["expected"], "actual": row["actual"], "message": row["message"],
    }  # fmt: skip


def trace_warnings(
    evidence: Mapping[str, Any],
    actual: Sequence[Mapping[str, Any]],
    requests: Sequence[Mapping[str, Any]],
    quirks: Mapping[str, str],
) -> list[WarningEntry]:
    """What did not change a trace's verdict but a reader should know, from what was recorded:
    extra reads the case's whitelist let pass (the evidence's `ignored_ordinals`, i.e.
    `Verdict.ignored`), server quirks the agent tolerated and model requests it retried (its chat
    spans' `traceladder.response.quirks` / `traceladder.request.retries`)."""
    out: list[WarningEntry] = []
    tools = {c["ordinal"]: c["tool"] for c in actual}
    for ordinal in evidence.get("ignored_ordinals") or ():
        tool = tools.get(ordinal, "?")
        message = f"{tool} (call {ordinal}): an extra read the case's whitelist allows; ignored by the judge"
        out.append({"kind": "ignored_read", "message": message, "ordinal": ordinal, "tool": tool})
    steps: dict[str, list[int]] = {}
    counts: Counter[str] = Counter()
    for request in requests:
        for quirk in request["quirks"]:
            counts[quirk] += 1
            if request["step"] not in steps.setdefault(quirk, []):
                steps[quirk].append(request["step"])
    order = {name: i for i, name in enumerate(quirks)}
    for quirk, at in sorted(steps.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])):
        what = quirks.get(quirk, quirk)
        where = f"model response{'s' if len(at) > 1 else ''} {', '.join(map(str, at))}"
        times = f" ({counts[quirk]}×)" if counts[quirk] != len(at) else ""
        message = f"server quirk tolerated in {where}{times}: {what}"
        out.append({"kind": "server_quirk", "message": message, "quirk": quirk, "count": counts[quirk],
                    "steps": at})  # fmt: skip
    for request in requests:
        errors = list(request["retries"])
        if not errors:
            continue
        seen = Counter(errors)
        causes = ", ".join(e if seen[e] == 1 else f"{e} ×{seen[e]}" for e in dict.fromkeys(errors))
        outcome = "then succeeded" if request["succeeded"] else "still failed"
        message = f"model request {request['step']} was retried {len(errors)}× ({causes}) and {outcome}"
        out.append({"kind": "retried_request", "message": message, "step": request["step"],
                    "retries": len(errors), "errors": errors, "succeeded": request["succeeded"]})  # fmt: skip
    return out


def _diff(rungs: Sequence[RungEntry]) -> list[DiffEntry]:
    """The deterministic diff: every check of a failing rung that records a difference (not a
    plain match, not an ignored read — those are warnings), with its rung, in ladder order."""
    return [
        {"rung": rung["rung"], "rung_name": rung["name"], **check}
        for rung in rungs
        for check in rung.get("checks", ())
        if check["status"] not in ("match", "ignored")
    ]


def summary_problems(report: ReportV1) -> list[str]:
    """The arithmetic of seed 1's summary, which a JSON Schema cannot state: case_count is the sum
    of verdict_counts, scored_count is PASS + FAIL, accuracy is PASS / scored_count exactly, and
    taxonomy_counts add up to the FAIL count. Empty when it holds. (The run's case_count is also
    the number of its results: `report_problems`, or the streaming writer's count.)"""
    found: list[str] = []
    s = report["summary"]
    blocks = [("summary", s)] + [(f"summary/dimensions/{d}", b) for d, b in s["dimensions"].items()]
    for where, block in blocks:
        counts = block["verdict_counts"]
        if block["case_count"] != sum(counts.values()):
            found.append(f"{where}: case_count {block['case_count']} is not the sum of verdict_counts")
        if block["scored_count"] != sum(counts[v] for v in SCORED):
            found.append(f"{where}: scored_count {block['scored_count']} is not PASS + FAIL")
        if block["accuracy"] != accuracy_of(counts):
            found.append(f"{where}: accuracy {block['accuracy']} is not PASS / scored_count")
    if sum(s["taxonomy_counts"].values()) != s["verdict_counts"][VerdictValue.FAIL]:
        found.append("summary: taxonomy_counts do not add up to the FAIL count")
    return found


def case_runs_in(results: Iterable[Mapping[str, Any]]) -> int:
    """How many case runs `results` (in report order) are: each result is one, except the turns of
    a multi-turn case, which together are one (decision 460; they come one after another)."""
    counter = CaseRunCount()
    for result in results:
        counter.add(result)
    return counter.count


class CaseRunCount:
    """`case_runs_in` for results seen one at a time (a streamed report): `add` each in report
    order, then read `count`."""

    def __init__(self) -> None:
        self.count = 0
        self._previous: tuple[Any, Any] | None = None

    def add(self, result: Mapping[str, Any]) -> None:
        key = case_run_key(result)
        self.count += key is None or key != self._previous
        self._previous = key


def case_run_key(result: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """The (case, repeat) a turn of a multi-turn case plays, None for any other result."""
    return (result["case_id"], result["repeat_index"]) if result.get("turn") is not None else None


def report_problems(report: ReportV1) -> list[str]:
    """`summary_problems`, and the run's case_count is the number of case runs its results are."""
    found = summary_problems(report)
    s = report["summary"]
    runs = case_runs_in(report["results"])
    if s["case_count"] != runs:
        found.append(f"summary: case_count {s['case_count']} but the results are {runs} case runs")
    return found


def _rungs(rows: Sequence[Mapping[str, Any]], evidence: Mapping[str, Any]) -> list[RungEntry]:
    """Per rung, in ladder order: status, scores and explanation from `rung_results`, plus the
    checks (with argument diffs) the evidence keeps for a rung that did not pass."""
    checks = evidence.get("checks") or {}
    out = []
    for row in sorted(rows, key=lambda g: (g["rung"], g["rung_name"])):
        rung: RungEntry = {
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
