"""The pull-request comment of a gated run: markdown with the before/after table (the baseline's
canonical run against this run, overall and per dimension) and the cases whose verdict flipped,
each regression with its failure class and the evidence's first words. Pure: the gate's
baseline and the run's ReportV1 in, text out (`gate --comment FILE` writes it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traceladder.evaluate.rungs.types import VerdictValue as V
from traceladder.report.build import dimension_label
from traceladder.report.documents import BaselineV1, ReportV1
from traceladder.text import printable

MAX_FLIPS = 30  # a comment stays readable; the artifact's report has every case
_EXPLANATION = 160


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _delta(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return "—"
    points = (after - before) * 100
    return f"{points:+.1f} pt" + (" ⚠️" if points < 0 else "")


def _cell(text: Any) -> str:
    return printable(str(text)).replace("|", "\\|")


def pr_comment(baseline: BaselineV1, report: ReportV1, decision: str, *, max_flips: int = MAX_FLIPS) -> str:
    """The comment body. `decision`: the gate's one line (passed / failed and why)."""
    run = report["run"]
    summary = report["summary"]
    before = baseline["summary"]
    subject = run.get("model") or "?"
    hashes = run["input_hashes"]
    version = hashes.get("agent_version") if hashes else None
    base_version = (baseline.get("input_hashes") or {}).get("agent_version")
    lines = [
        f"### traceladder — `{_cell(subject)}`",
        "",
        _cell(decision),
        "",
        f"Baseline `{_cell(baseline['run_id'])}`"
        + (f" (version `{_cell(base_version)[:12]}`)" if base_version else "")
        + f" → run `{_cell(run['run_id'])}`"
        + (f" (version `{_cell(version)[:12]}`)" if version else ""),
        "",
        "| | before | after | change |",
        "|---|---:|---:|---:|",
        f"| **pass rate** | {_rate(before['accuracy'])} | {_rate(summary['accuracy'])} | "
        f"{_delta(before['accuracy'], summary['accuracy'])} |",
    ]
    dims_after = summary["dimensions"]
    for name in sorted(set(before.get("dimensions") or {}) | set(dims_after)):
        b = (before.get("dimensions") or {}).get(name)
        a = dims_after[name]["accuracy"] if name in dims_after else None
        label = dimension_label(name, summary.get("dimension_names"))
        lines.append(f"| {_cell(label)} | {_rate(b)} | {_rate(a)} | {_delta(b, a)} |")
    counts = summary["verdict_counts"]
    for verdict in (V.FAIL, V.AGENT_ERROR):
        lines.append(
            f"| {verdict} | {before['verdict_counts'].get(verdict, 0)} | {counts.get(verdict, 0)} | |"
        )
    regressed, improved = flips(baseline, report)
    lines += ["", f"**Flipped cases**: {len(regressed)} regressed, {len(improved)} improved."]
    if regressed or improved:
        lines += ["", "| case | before | after | why |", "|---|---|---|---|"]
        for case_id, was, result in [*regressed, *improved][:max_flips]:
            why = result.get("taxonomy") or ""
            explanation = (result.get("explanation") or "")[:_EXPLANATION]
            shown = f"{why}: {explanation}" if why and result["verdict"] != V.PASS else ""
            lines.append(f"| `{_cell(case_id)}` | {was} | {result['verdict']} | {_cell(shown)} |")
        more = len(regressed) + len(improved) - max_flips
        if more > 0:
            lines.append(f"\n… and {more} more in the report artifact.")
    return "\n".join(lines) + "\n"


def flips(
    baseline: Mapping[str, Any], report: ReportV1
) -> tuple[list[tuple[str, str, Mapping[str, Any]]], list[tuple[str, str, Mapping[str, Any]]]]:
    """(regressed, improved): (case id, baseline verdict, this run's first-repeat result) of each
    case that passed before and not now, or the other way round, in case order."""
    first: dict[str, Mapping[str, Any]] = {}
    for result in sorted(report["results"], key=lambda r: (str(r["case_id"]), r.get("repeat_index") or 0)):
        if result["case_id"]:
            first.setdefault(result["case_id"], result)
    regressed, improved = [], []
    for case_id, was in sorted((baseline.get("cases") or {}).items()):
        now = first.get(case_id)
        if now is None:
            continue
        passed_before, passes_now = was["verdict"] == V.PASS, now["verdict"] == V.PASS
        if passed_before and not passes_now:
            regressed.append((case_id, was["verdict"], now))
        elif passes_now and not passed_before:
            improved.append((case_id, was["verdict"], now))
    return regressed, improved
