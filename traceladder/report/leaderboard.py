"""LeaderboardV1: N runs of one suite side by side, as BFCL shows models — pass rate with its
Wilson 95% interval, the rate per dimension, agent errors, tokens and cost per case. Pure.

Every rate is the run's report's own (PASS / (PASS + FAIL)); nothing is re-judged. Tokens per case
are the agent's model tokens (input + output) over the run's case runs; cost per case prices them
with the price table (USD per million tokens), is 0 for a simulated model (nothing is paid), and
None for a model the table does not price — unknown, never a guessed zero.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from traceladder.evaluate.rungs.types import VerdictValue as V
from traceladder.report.build import dimension_label
from traceladder.report.stats import wilson

Price = Callable[[str, int, int], float | None]  # (model, input tokens, output tokens) → USD


def _rate(block: Mapping[str, Any]) -> dict[str, Any]:
    counts = block["verdict_counts"]
    passed, n = counts.get(V.PASS, 0), counts.get(V.PASS, 0) + counts.get(V.FAIL, 0)
    low, high = wilson(passed, n)
    return {"passed": passed, "scored": n, "rate": passed / n if n else None, "interval": [low, high]}


def leaderboard(
    entries: Sequence[tuple[Mapping[str, Any], Mapping[str, int]]], *, price: Price
) -> dict[str, Any]:
    """`entries`: per run, its ReportV1 and its usage (`case_runs`, `input_tokens`,
    `output_tokens`). Rows are ranked by pass rate (unscored runs last), then by the lower end of
    the interval, then in the order given."""
    dimensions: list[str] = []
    names: dict[str, str] = {}
    for report, _ in entries:
        dimensions += [d for d in report["summary"]["dimensions"] if d not in dimensions]
        for code, title in (report["summary"].get("dimension_names") or {}).items():
            names.setdefault(code, title)
    rows = []
    for order, (report, usage) in enumerate(entries):
        run, s = report["run"], report["summary"]
        n = usage["case_runs"]
        tokens = usage["input_tokens"] + usage["output_tokens"]
        cost = price(str(run["model"]), usage["input_tokens"], usage["output_tokens"])
        rows.append(
            {
                "run_id": run["run_id"],
                "model": run["model"],
                **_rate(s),
                "dimensions": {
                    d: _rate(s["dimensions"][d]) if d in s["dimensions"] else None for d in dimensions
                },
                "agent_errors": s["verdict_counts"].get(V.AGENT_ERROR, 0),
                "case_runs": n,
                "tokens_per_case": tokens / n if n else None,
                "cost_per_case_usd": cost / n if cost is not None and n else None,
                "cost_usd": cost,
                "_order": order,
            }
        )
    rows.sort(key=lambda r: (r["rate"] is None, -(r["rate"] or 0.0), -r["interval"][0], r["_order"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
        del row["_order"]
    board = {"schema": "LeaderboardV1", "dimensions": dimensions, "rows": rows}
    return {**board, "dimension_names": {d: names[d] for d in dimensions if d in names}}


def _pct(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.1%}"


def render_leaderboard(board: Mapping[str, Any]) -> str:
    """Plain text, one run per line, best first."""
    dims = board["dimensions"]
    head = f"{'#':>2} {'model':<24} {'run':<28} {'pass rate':>9} {'95% interval':>15} {'n':>5}"
    head += "".join(f" {d:>6}" for d in dims) + f" {'errors':>6} {'tokens/case':>11} {'USD/case':>9}"
    lines = [head]
    for r in board["rows"]:
        low, high = r["interval"]
        cells = f"{r['rank']:>2} {str(r['model'])[:24]:<24} {str(r['run_id'])[:28]:<28} {_pct(r['rate']):>9} "
        cells += f"{f'[{low:.1%}, {high:.1%}]':>15} {r['scored']:>5}"
        cells += "".join(f" {_pct((r['dimensions'][d] or {}).get('rate')):>6}" for d in dims)
        tokens = "—" if r["tokens_per_case"] is None else f"{r['tokens_per_case']:.0f}"
        cost = "unknown" if r["cost_per_case_usd"] is None else f"{r['cost_per_case_usd']:.5f}"
        cells += f" {r['agent_errors']:>6} {tokens:>11} {cost:>9}"
        lines.append(cells)
    named = board.get("dimension_names") or {}
    if named:  # what the codes mean in this suite (D1 is not the same dimension in every suite)
        lines.append("; ".join(dimension_label(d, named) for d in dims if d in named))
    lines.append(
        "pass rate = PASS / (PASS + FAIL) per run, Wilson 95% interval; n = scored traces; "
        "errors = AGENT_ERROR (not scored); cost: unknown for a model the price table does not list"
    )
    return "\n".join(lines) + "\n"
