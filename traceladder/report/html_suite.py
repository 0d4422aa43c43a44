"""The run page's trend across runs of the same suite: every run in the store whose case file has
this run's SHA-256, oldest first — date, model, pass rate with its Wilson interval, the pass rate
of each dimension, and which of the other inputs (prompt, tool schemas, fixtures, policy, run
configuration, case selection) differ from this run's, since that is what a change in the rate is
to be read against. The rates are each run's report's: PASS / (PASS + FAIL) of its judged traces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.report.build import dimension_label
from traceladder.report.html_data import Rate
from traceladder.report.html_svg import bars, rate_bar
from traceladder.report.html_text import esc, pct, table, td, when

# The inputs besides the case file a run is bound to (`runs.input_hashes`), as a reader names them.
INPUTS = (
    ("system_prompt", "system prompt"),
    ("tool_schemas", "tool schemas"),
    ("fixtures", "fixtures"),
    ("policy", "policy"),
    ("run_config", "run configuration"),
)


def _rate(counts: Mapping[str, int]) -> Rate:
    passed = counts.get(VerdictValue.PASS, 0)
    return Rate(passed, passed + counts.get(VerdictValue.FAIL, 0))


def _interval(rate: Rate) -> str:
    ci = rate.interval
    return "—" if ci is None else f"{pct(ci[0])}–{pct(ci[1])}"


def differences(run: Mapping[str, Any], this: Mapping[str, Any]) -> list[str]:
    """What `run` was run with that differs from `this` run, by input hash and case selection."""
    mine, theirs = this.get("input_hashes") or {}, run.get("input_hashes") or {}
    out = [name for key, name in INPUTS if mine.get(key) != theirs.get(key)]
    if run.get("selection") != this.get("selection"):
        out.append("case selection")
    return out


def suite_section(
    suite: Mapping[str, Any],
    this: Mapping[str, Any],
    dimensions: Sequence[str],
    names: Mapping[str, str] | None = None,
) -> str:
    """`suite`: `store.suite_runs.SuiteRuns` as a mapping; `this`: the report's run block;
    `dimensions`: the report's, in its order; `names`: what the suite calls them."""
    runs: Sequence[Mapping[str, Any]] = suite.get("runs") or ()
    shown, total = len(runs), suite.get("total") or len(runs)
    out = [
        '<section id="suite-runs"><h2>Runs of this suite</h2><p>Every run in this store of the same case '
        f"file (cases SHA-256 <code>{esc(str(suite.get('cases_hash'))[:16])}</code>), oldest first"
        + (f" — the latest {shown} of {total}" if total > shown else "")
        + ": the pass rate each run's report states, PASS / (PASS + FAIL), with its 95% interval, and "
        "by dimension. <i>Differs</i> names the inputs a run changed against this one: what a change "
        "in the rate is to be read against.</p>"
    ]
    if shown <= 1:
        out.append(
            '<p class="muted" id="suite-only">This is the only judged run of this suite in the store.</p>'
        )
    chart = [
        rate_bar(
            f"{when(r.get('started_at'))} · {r.get('model') or '—'}"
            + (" (this run)" if r["run_id"] == this.get("run_id") else ""),
            rate.passed,
            rate.scored,
            rate.interval,
        )
        for r in runs
        for rate in (_rate(r.get("verdict_counts") or {}),)
    ]
    out.append(bars(chart, title="pass rate per run of this suite, with 95% intervals", scale=1))
    rows = []
    for r in runs:
        rate = _rate(r.get("verdict_counts") or {})
        here = r["run_id"] == this.get("run_id")
        dims = "".join(
            td(f"{pct(d.value)} ({d.passed}/{d.scored})" if d.scored else "—", "num")
            for name in dimensions
            for d in (_rate((r.get("dimensions") or {}).get(name) or {}),)
        )
        changed = "—" if here else esc(", ".join(differences(r, this)) or "nothing")
        run_cell = f"<code>{esc(r['run_id'])}</code>" + (" <b>(this run)</b>" if here else "")
        cells = [
            td(esc(when(r.get("started_at")))),
            td(run_cell),
            td(f"<code>{esc(r.get('model') or '—')}</code>"),
            td(esc(r.get("status") or "—")),
            td(sum((r.get("verdict_counts") or {}).values()), "num"),
            td(f"{pct(rate.value)} ({rate.passed}/{rate.scored})", "num pass-rate"),
            td(_interval(rate)),
            dims,
            td(changed, "differs"),
        ]
        css = ' class="here"' if here else ""
        rows.append(f'<tr data-run="{esc(r["run_id"])}"{css}>{"".join(cells)}</tr>')
    heads = ("date (UTC)", "run", "model", "status", "traces", "pass rate", "95% interval",
             *(esc(dimension_label(d, names)) for d in dimensions), "differs")  # fmt: skip
    out.append(table(heads, rows, 'id="suite-table"'))
    return "".join(out) + "</section>"
