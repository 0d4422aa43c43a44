"""A ReportV1 as one self-contained HTML page: stylesheet, script, data and charts inline, nothing
fetched — no CDN, no font, no image, no request of any kind. A Content-Security-Policy in the page
says so to the browser too (`default-src 'none'`, the script and stylesheet allowed by hash only),
so even markup that slipped past escaping could neither load nor run anything.

Every number is in the HTML, so the summary reads without JavaScript and prints; the script only
sorts, filters and opens the evidence of a linked case. Data reaches the page through `esc` and
`script_json` (html_text.py) and nowhere else.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from traceladder import __version__
from traceladder.evaluate.rungs.types import SCORED
from traceladder.report import html_sections as sections
from traceladder.report.documents import ComparisonV1, ReportV1, Result
from traceladder.report.html_cases import VERDICT_ICONS, case_table, filters
from traceladder.report.html_conversations import CONVERSATION_LIMIT, conversations_section
from traceladder.report.html_data import Comparison, case_name, distinct, index, rate_of
from traceladder.report.html_digest import PageDigest
from traceladder.report.html_exchange import prompts_block, system_prompts
from traceladder.report.html_paired import paired_section
from traceladder.report.html_suite import suite_section
from traceladder.report.html_text import esc, pct, script_json, table, td, when

CASE_LIMIT = 1000  # rows in the case table; the summary always counts every trace


@dataclass(frozen=True)
class LiveContext:
    """What the live page shows beside the report: the window, where its traces came from, and the
    trend per deploy (rows shaped like `trend_by_version`, plus `label` and `drop`)."""

    since: str
    hours: float
    services: Sequence[Mapping[str, Any]]
    models: Sequence[str]
    trend: Sequence[Mapping[str, Any]] = field(default_factory=list)


def _asset(name: str) -> str:
    return files("traceladder.report.html_assets").joinpath(name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def render_html(
    report: ReportV1,
    details: Mapping[str, Mapping[str, Any]],
    *,
    generated_at: str,
    comparison: Comparison | None = None,
    paired: ComparisonV1 | None = None,
    live: LiveContext | None = None,
    suite: Mapping[str, Any] | None = None,
    case_limit: int = CASE_LIMIT,
    digest: PageDigest | None = None,
) -> str:
    """The page. `details`: per trace id, `spans`, `results` (tool result by ordinal), `final_text`,
    `conversation`; `paired`: the ComparisonV1 of the compared run (A) and this one (B), shown after
    `comparison`; `suite`: the runs of this run's suite (`store.suite_runs.SuiteRuns` as a
    mapping), for the trend across them. `digest`: the page's figures over every result, folded
    by a caller that streamed them (`report["results"]` then holds none); without it, they are
    folded from `report["results"]`."""
    css, js = _asset("report.css"), _asset("report.js")
    if digest is None:
        digest = PageDigest.of(report, case_limit).add_all(report["results"])
    shown, hidden = digest.shown()
    title = "live traces" if live else f"run {report['run'].get('run_id')}"
    embedded = {
        "schema": "traceladder.html/1",
        "index": index(shown),
        "report": {**report, "results": shown},
        "results_omitted": hidden,
    }
    policy = (
        f"default-src 'none'; script-src '{_sha256(js)}'; style-src '{_sha256(css)}'; "
        "base-uri 'none'; form-action 'none'"
    )
    where = {case_name(c): i for i, c in enumerate(shown)}  # a case's row, for links to it
    parts = [
        _headline(report, live),
        sections.compare(comparison, where) if comparison else "",
        paired_section(paired) if paired else "",
        sections.trend(live.trend) if live else "",
        suite_section(
            suite,
            report["run"],
            list(report["summary"]["dimensions"]),
            report["summary"].get("dimension_names"),
        )
        if suite
        else "",
        sections.ladder(report, digest, where),
        sections.rates(report, digest),
        sections.classes(report, digest, where),
        _conversations(report),
        _cases(shown, hidden, details, digest.limit),
    ]
    nav = "".join(
        f'<a href="#{a}">{t}</a>'
        for a, t, on in (
            ("summary", "Summary", True),
            ("compare", "Compared", comparison is not None),
            ("trend", "Trend", live is not None),
            ("suite-runs", "Runs of this suite", suite is not None),
            ("ladder", "Cost ladder", True),
            ("rates", "By dimension and tool", True),
            ("classes", "Failure classes", True),
            ("conversations", "Conversations", "conversations" in report["summary"]),
            ("cases", "Cases", True),
        )
        if on
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>traceladder · {esc(title)}</title><style>{css}</style></head><body>"
        f'<nav class="top">{nav}</nav><main>{"".join(parts)}</main>'
        f"<footer>Generated {esc(generated_at)} by traceladder {esc(__version__)}. One self-contained file: "
        "it makes no network request.</footer>"
        f'<script type="application/json" id="report-data">{script_json(embedded)}</script>'
        f"<script>{js}</script></body></html>\n"
    )


def _conversations(report: ReportV1) -> str:
    """The conversations section, for a report that has conversations (its first ones)."""
    if "conversations" not in report["summary"]:
        return ""
    shown = list(report.get("conversations", ()))[:CONVERSATION_LIMIT]
    return conversations_section(report["summary"]["conversations"], shown)


def _headline(report: ReportV1, live: LiveContext | None) -> str:
    run, s = report["run"], report["summary"]
    counts = s["verdict_counts"]
    rate = rate_of(s)
    model = str(run.get("model") or "")
    out = ['<section id="summary">']
    if live:
        out.append(f'<h1>traceladder · live traces <span class="muted">the last {live.hours:g} h</span></h1>')
    else:
        out.append(f'<h1>traceladder · run <span class="mono">{esc(run.get("run_id"))}</span></h1>')
    if model.startswith("sim:"):
        out.append(
            f'<p class="banner" role="note"><b>⚠ This is the simulator.</b> <code>{esc(model)}</code> is '
            "traceladder's built-in simulated model, not a real one: it answers some cases correctly and "
            "injects labelled faults into others. These numbers describe the simulator (and exercise the "
            "judge); they say nothing about any real model.</p>"
        )
    unscored = ", ".join(f"{counts[v]} {v}" for v in counts if v not in SCORED and counts[v])
    out.append(
        '<div class="headline"><div class="big"><span id="pass-rate">'
        f'{pct(rate.value)}</span> <span class="unit">pass rate</span></div>'
        f'<div id="pass-ci">95% interval <b>{sections.interval(rate)}</b> (Wilson)</div>'
        f'<div id="pass-basis"><span id="passed">{rate.passed}</span> of '
        f'<span id="scored">{rate.scored}</span> scored traces passed — '
        "PASS / (PASS + FAIL), as the gate counts"
        + (f"; not scored: {esc(unscored)}" if unscored else "")
        + "</div></div>"
    )
    cells = [
        f'<div><dt>{"traces" if live else "cases"}</dt><dd id="count-cases">{s["case_count"]}</dd></div>'
    ]
    cells += [
        f'<div class="v-{v}"><dt>{VERDICT_ICONS.get(v, "")} {v}</dt><dd id="count-{v}">{n}</dd></div>'
        for v, n in counts.items()
    ]
    out.append(f'<dl class="counts">{"".join(cells)}</dl>')
    out.append(_meta(report, live))
    out.append("</section>")
    return "".join(out)


def _meta(report: ReportV1, live: LiveContext | None) -> str:
    run = report["run"]
    if live:
        items = [
            ("window", f"first seen since {live.since} UTC ({live.hours:g} h)"),
            ("models", ", ".join(live.models) or "not recorded"),
            ("evaluator", run.get("evaluator_version") or "—"),
        ]
        rows = (
            f"<tr>{td(esc(s.get('service') or '(no service)'))}{td(esc(s.get('service_version') or '—'))}"
            f"{td(esc(s.get('environment') or '—'))}{td(esc(s.get('traces')), 'num')}"
            f"{td(esc(when(s.get('first_seen'))))}{td(esc(when(s.get('last_seen'))))}</tr>"
            for s in live.services
        )
        heads = ("service", "version", "environment", "traces", "first seen", "last seen")
        extra = table(heads, rows, 'class="services"')
    else:
        hashes: Mapping[str, object] = run["input_hashes"] or {}
        items = [
            ("model", run.get("model") or "—"),
            ("run date", when(run.get("started_at"))),
            ("finished", when(run.get("finished_at"))),
            ("status", run.get("status") or "—"),
            ("domain", run.get("domain") or "—"),
            ("suite", run.get("suite") or "—"),
            ("evaluator", run.get("evaluator_version") or "—"),
            ("inputs hash", str(hashes.get("inputs") or "—")[:16]),
        ]
        pairs = "".join(
            f"<tr><th>{esc(k)}</th><td><code>{esc(v)}</code></td></tr>" for k, v in hashes.items()
        )
        summary = "<summary>Input hashes (SHA-256)</summary>"
        extra = f'<details class="hashes">{summary}<table>{pairs}</table></details>' if pairs else ""
    dl = "".join(f"<div><dt>{esc(k)}</dt><dd>{esc(v)}</dd></div>" for k, v in items)
    return f'<dl class="meta">{dl}</dl>{extra}'


def _cases(shown: Sequence[Result], hidden: int, details: Mapping[str, Mapping[str, Any]], limit: int) -> str:
    options = {
        "verdict": [v for v in VERDICT_ICONS if any(c["verdict"] == v for c in shown)],
        "dimension": distinct(c.get("dimension") for c in shown),
        "failure_class": distinct(c.get("taxonomy") for c in shown),
        "tool": distinct(t for row in index(shown) for t in row["tools"]),
    }
    note = (
        f'<p class="note" id="case-cap">The table shows {len(shown)} of {len(shown) + hidden} traces — every '
        f"one that did not pass, then the first passing ones, at most {limit:,} (each with its evidence, "
        "about 12 KB of page a trace); the numbers above count all of them.</p>"
        if hidden
        else ""
    )
    prompts = system_prompts((details.get(c["trace_id"]) or {}).get("conversation") for c in shown)
    body = prompts_block(prompts) + filters(options) + case_table(shown, details, prompts)
    return f'<section id="cases"><h2>Cases</h2>{note}{body}</section>'
