"""BaselineV1: a canonical run's report bound to its model, configuration, date and input hashes.

A baseline is a small JSON file meant to be committed. Locking it requires evidence (seed 1's
calibration, automated where it can be): at least three complete runs with identical inputs, their
consistency record, and a review in which a person classified every FAIL of the canonical run as a
model error, a judge error or a golden error — judge and golden errors must be zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.report.documents import BaselineV1, ReportV1
from traceladder.report.repeatability import Trial, config_differences, listed_twice, not_repeated
from traceladder.suite.cases.hashes import canonical_json, sha256

REVIEW_CLASSES = ("model_error", "judge_error", "golden_error")
MIN_RUNS = 3
MAX_RUNS = 20  # `baseline init --runs`: more repetitions add little to pass^k and cost a run each


class LockRefused(Exception):
    """The evidence does not support locking; the message says what is missing."""


def report_sha256(report: ReportV1) -> str:
    return sha256(canonical_json(report))


def review_template(run_id: str, failures: Sequence[tuple[str, int, str | None, str]]) -> dict[str, Any]:
    """A review file listing every FAIL of a run, for a person to classify."""
    return {
        "schema": "ReviewV1",
        "run_id": run_id,
        "reviews": [
            {
                "case_id": c,
                "repeat_index": k,
                "failure_class": cls,
                "explanation": why,
                "classification": None,
                "note": "",
            }  # fmt: skip
            for c, k, cls, why in failures
        ],
    }


def check_review(
    review: Mapping[str, Any], run_id: str, fails: set[tuple[str | None, int]]
) -> dict[str, int]:
    """Counts per classification; raises LockRefused if the review does not cover every FAIL."""
    if review.get("run_id") != run_id:
        raise LockRefused(f"the review is for run {review.get('run_id')!r}, not the canonical run {run_id}")
    seen: dict[tuple[str, int], str] = {}
    for item in review.get("reviews", []):
        key = (item.get("case_id"), int(item.get("repeat_index", 0)))
        if item.get("classification") not in REVIEW_CLASSES:
            raise LockRefused(
                f"review of {key[0]}: classification must be one of {', '.join(REVIEW_CLASSES)}, "
                f"got {item.get('classification')!r}"
            )
        seen[key] = item["classification"]
    missing = sorted(fails - set(seen))
    if missing:
        raise LockRefused(
            f"the review does not classify {len(missing)} FAIL(s): {', '.join(str(c) for c, _ in missing)}"
        )
    counts = {cls: sum(1 for key, c in seen.items() if c == cls and key in fails) for cls in REVIEW_CLASSES}
    bad = counts["judge_error"] + counts["golden_error"]
    if bad:
        raise LockRefused(
            f"the review found {counts['judge_error']} judge error(s) and {counts['golden_error']} golden "
            "error(s); fix the judge or the cases, re-run, and review again"
        )
    return {"fails": len(fails), **counts}


def build_baseline(
    run: Mapping[str, Any],
    report: ReportV1,
    consistency: Mapping[str, Any],
    review_counts: Mapping[str, int],
    *,
    now: datetime | None = None,
) -> BaselineV1:
    s = report["summary"]
    cases = {
        r["case_id"]: {"verdict": r["verdict"], "failure_class": r["taxonomy"]}
        for r in report["results"]
        if r["repeat_index"] == 0
    }
    cases.update(_conversation_cases(report))
    body: dict[str, Any] = {
        "schema": "BaselineV1",
        "locked_at": (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "run_id": run["run_id"],
        "model": run["model"],
        "provider": run.get("provider"),
        "base_url_host": run.get("base_url_host"),
        "config": run.get("config"),
        "input_hashes": run.get("input_hashes"),
        "evaluator_version": run.get("evaluator_version"),
        "runs": list(consistency["runs"]),
        "summary": {
            "case_count": s["case_count"],
            "verdict_counts": s["verdict_counts"],
            "scored_count": s["scored_count"],
            "accuracy": s["accuracy"],
            "dimensions": {d: b["accuracy"] for d, b in s["dimensions"].items()},
            "taxonomy_counts": s["taxonomy_counts"],
        },
        "consistency": {
            k: consistency[k] for k in ("mean_agreement", "flaky_cases", "pass_hat_k", "pass_at_k")
        },
        "review": dict(review_counts),
        "cases": cases,
        "report_sha256": report_sha256(report),
    }
    body["baseline_sha256"] = sha256(canonical_json(body))
    # its keys are BaselineV1's; the writer validates it against the schema before a byte is written
    return cast(BaselineV1, body)


def verify_self_hash(baseline: Mapping[str, Any]) -> bool:
    body = {k: v for k, v in baseline.items() if k != "baseline_sha256"}
    return baseline.get("baseline_sha256") == sha256(canonical_json(body))


def comparability(
    baseline: Mapping[str, Any], model: str, input_hashes: Mapping[str, str], config: Mapping[str, Any]
) -> list[str]:
    """What differs between a run and the baseline that makes them incomparable (empty = fine),
    each difference named: the run configuration's with every differing field and both values.

    Cases, model and run configuration must match. Tool schemas, prompt, fixtures and policy may
    differ: changing them is exactly what a pull request does and what the gate measures.
    """
    base = baseline.get("input_hashes") or {}
    differences = []
    if input_hashes.get("cases") != base.get("cases"):
        differences.append("case hash")
    if model != baseline.get("model"):
        differences.append(f"model ({model} vs baseline {baseline.get('model')})")
    if input_hashes.get("run_config") != base.get("run_config"):
        fields = config_differences(config, baseline.get("config"), other_name="baseline")
        differences.append(f"run configuration ({fields})")
    return differences


def check_lock_runs(runs: Sequence[Trial]) -> None:
    """At least MIN_RUNS distinct, complete runs with identical inputs, model and selection
    (`report.repeatability`). The same run listed three times is one trial, not three; a full
    run next to partial selections is not a repetition of it."""
    twice = listed_twice([run.run_id for run in runs])
    if twice:
        raise LockRefused(f"run {twice} is listed more than once; locking needs {MIN_RUNS} distinct runs")
    if len(runs) < MIN_RUNS:
        raise LockRefused(
            f"locking needs at least {MIN_RUNS} complete runs; the consistency record has {len(runs)}"
        )
    problem = not_repeated(runs)
    if problem is None:
        return
    if problem.kind == "incomplete":
        raise LockRefused(problem.incompleteness)
    if problem.kind == "selection":
        raise LockRefused(
            f"runs {problem.first} and {problem.other} ran different selections of cases; "
            "repeat the same selection (or the full suite)"
        )
    raise LockRefused(
        f"runs {problem.first} and {problem.other} do not have identical inputs: different "
        + ", ".join(problem.differing)
    )


def _conversation_cases(report: ReportV1) -> dict[str, dict[str, Any]]:
    """A multi-turn case's entry is its conversation's verdict, as the report counts it (decision
    460), never its last turn's: the class of the conversation finding that decided it, else the
    deciding turn's own."""
    taxonomy = {r["trace_id"]: r["taxonomy"] for r in report["results"]}
    out = {}
    for c in report.get("conversations", ()):
        if c["case_id"] is None or c["repeat_index"] != 0:
            continue
        decided = c["deciding_turn"]
        found = [f["finding_class"] for f in c["findings"] if f["turn"] == decided]
        turn = next((t for t in c["turns"] if t["turn"] == decided), None)
        cls = found[0] if found else taxonomy.get(turn["trace_id"]) if turn else None
        out[c["case_id"]] = {
            "verdict": c["verdict"],
            "failure_class": cls if c["verdict"] == VerdictValue.FAIL else None,
        }
    return out
