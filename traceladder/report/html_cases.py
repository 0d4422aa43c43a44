"""The HTML report's case table: one row per judged trace, and under it the trace's evidence in a
`<details>` (the conversation — the request, every call with its arguments and result, the final
answer —, expected calls next to actual ones, argument differences, every rung's result and
findings, the span waterfall).

Everything comes from the ReportV1 case and the trace's stored detail; nothing is judged again.
Verdicts and statuses are always text and an icon, never a colour alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.report.documents import FindingEntry, Result, RungEntry
from traceladder.report.html_data import argument_diffs, call_pairs, case_name, case_tools
from traceladder.report.html_exchange import exchange
from traceladder.report.html_svg import waterfall
from traceladder.report.html_text import as_json, clip, esc, table, td

VERDICT_ICONS: dict[str, str] = {
    VerdictValue.PASS: "✓",
    VerdictValue.FAIL: "✗",
    VerdictValue.AGENT_ERROR: "⚠",
    VerdictValue.SKIP: "–",
    VerdictValue.NOT_EVALUATED: "?",
}
STATUS_ICONS = {
    "pass": "✓",
    "fail": "✗",
    "skipped": "–",
    "not_evaluated": "?",  # rung statuses
    "match": "✓",
    "partial": "≈",
    "extra": "+",
    "missing": "−",
    "wrong_tool": "✗",
    "invalid": "✗",  # checks
}
COLUMNS = (
    ("case", "Case"),
    ("dimension", "Dim."),
    ("verdict", "Verdict"),
    ("failure_class", "Failure class"),
    ("settled_at", "Settled by"),
    ("tools", "Tools"),
    ("explanation", "Explanation"),
)
RESULT_CHARS = 1500


def shown_explanation(case: Result) -> str:
    """The case's explanation as the page shows it: its `reason`, the explanation without the note
    a PASS's ends with when rungs could not run on it. The note is the same on nearly every PASS of
    a suite (a domain with no invariant policy says "(not evaluated: invariants)" 41 times in a
    sim:faulty run), so the ladder section states it once, with the reason and the count; each
    case's rungs table keeps the rung's status. The ladder records the reason as its own field
    (decision 630), so nothing here takes words off a text; a report without the field (written
    before it existed) shows the explanation whole."""
    reason = case.get("reason")
    return str(case.get("explanation") or "") if reason is None else reason


def verdict_badge(verdict: str | None) -> str:
    v = str(verdict)
    css = v if v in VERDICT_ICONS else "other"
    return f'<span class="badge v-{css}">{VERDICT_ICONS.get(v, "•")} {esc(v)}</span>'


def status_badge(status: str | None) -> str:
    s = str(status)
    good = s in ("pass", "match")
    bad = s in ("fail", "partial", "extra", "missing", "wrong_tool", "invalid")
    css = "s-good" if good else "s-bad" if bad else "s-none"
    return f'<span class="status {css}">{STATUS_ICONS.get(s, "•")} {esc(s.replace("_", " "))}</span>'


def filters(options: Mapping[str, Sequence[str]]) -> str:
    """The filter bar (hidden until the script runs: without it, it would do nothing)."""
    selects = []
    for key, label in (
        ("verdict", "Verdict"),
        ("dimension", "Dimension"),
        ("failure_class", "Failure class"),
        ("tool", "Tool"),
    ):
        opts = "".join(f'<option value="{esc(o)}">{esc(o)}</option>' for o in options.get(key, ()))
        selects.append(
            f'<label>{label} <select id="f-{key}" data-filter="{key}"><option value="">all</option>{opts}'
            "</select></label>"
        )
    return (
        '<form class="filters" id="filters" hidden>'
        + "".join(selects)
        + '<label>Case <input id="f-search" type="search" placeholder="case or trace id" autocomplete="off">'
        '</label><button type="reset" id="f-reset">Reset</button>'
        '<output id="f-count" aria-live="polite"></output></form>'
        '<noscript><p class="muted">Sorting and filtering need JavaScript; every number and every case\'s '
        "evidence is on this page without it.</p></noscript>"
    )


def case_table(
    cases: Sequence[Result],
    details: Mapping[str, Mapping[str, Any]],
    prompts: Mapping[str, int] | None = None,
) -> str:
    """The table; `prompts` numbers the system prompts printed once above it (`html_exchange`)."""
    head = "".join(f'<th scope="col" data-key="{key}">{label}</th>' for key, label in COLUMNS)
    bodies = [_case(i, c, details.get(c["trace_id"]) or {}, prompts or {}) for i, c in enumerate(cases)]
    return f'<table id="case-table" class="cases"><thead><tr>{head}</tr></thead>{"".join(bodies)}</table>'


def _case(i: int, case: Result, detail: Mapping[str, Any], prompts: Mapping[str, int]) -> str:
    settled = (
        f"{case['settled_at']} {esc(case.get('settled_by') or '')}"
        if case.get("settled_at") is not None
        else "—"
    )
    cells = [
        f'<th scope="row"><a href="#case-{i}">{esc(case_name(case))}</a></th>',
        f"<td>{esc(case.get('dimension') or '—')}</td>",
        f"<td>{verdict_badge(case['verdict'])}</td>",
        f"<td>{esc(case.get('taxonomy') or '—')}</td>",
        f"<td>{settled}</td>",
        f"<td>{', '.join(f'<code>{esc(t)}</code>' for t in case_tools(case)) or '—'}</td>",
        f'<td class="why">{esc(clip(shown_explanation(case), 240))}</td>',
    ]
    summary = " · ".join(
        p for p in (esc(case_name(case)), esc(case["verdict"]), esc(case.get("taxonomy") or ""), settled) if p
    )
    return (
        f'<tbody class="case" id="case-{i}" data-i="{i}" data-verdict="{esc(case["verdict"])}">'
        f'<tr class="row">{"".join(cells)}</tr>'
        f'<tr class="detail"><td colspan="{len(COLUMNS)}"><details><summary>Evidence: {summary}</summary>'
        f'<div class="evidence">{evidence(case, detail, prompts)}</div></details></td></tr></tbody>'
    )


def evidence(case: Result, detail: Mapping[str, Any], prompts: Mapping[str, int] | None = None) -> str:
    """Everything recorded about one judged trace, in the order a reader checks it: what was said
    and done (the conversation), then how each rung judged it."""
    out = [
        f'<p class="explanation">{esc(shown_explanation(case))}</p>',
        f'<p class="muted">trace <code>{esc(case["trace_id"])}</code> · dimension '
        f"{esc(case.get('dimension') or '—')}</p>",
    ]
    warnings = case.get("warnings") or []
    if warnings:
        items = "".join(f"<li>⚠ {esc(_warning(w))}</li>" for w in warnings)
        out.append(f'<h4>Warnings</h4><ul class="warnings">{items}</ul>')
    said = detail.get("conversation")
    if said or not detail.get("final_text"):
        out.append("<h4>Exchange</h4>" + exchange(said, prompts or {}))
    out.append("<h4>Expected and actual calls</h4>" + _calls(case, detail.get("results") or {}))
    diffs = argument_diffs(case)
    out.append(
        "<h4>Argument differences</h4>" + (_diffs(diffs) if diffs else '<p class="muted">None recorded.</p>')
    )
    out.append("<h4>Rungs</h4>" + _rungs(case.get("rungs") or []))
    if case.get("findings"):
        out.append("<h4>Findings</h4>" + _findings(case["findings"]))
    if not said and detail.get("final_text"):  # an answer recorded without its conversation
        out.append(
            f'<h4>The model\'s final answer</h4><blockquote class="answer">'
            f"{esc(clip(detail['final_text'], RESULT_CHARS))}</blockquote>"
        )
    out.append("<h4>Spans</h4>" + waterfall(detail.get("spans") or []))
    return "".join(out)


def _warning(w: Any) -> str:
    if isinstance(w, Mapping):
        return str(w.get("message") or w.get("code") or as_json(w))
    return str(w)


def _args(values: Mapping[str, Any] | None, changed: set[str], rules: Mapping[str, str] | None = None) -> str:
    if not values:
        return '<span class="muted">no arguments</span>'
    rows = []
    for name, value in values.items():
        diff = name in changed
        rule = (rules or {}).get(name)
        rows.append(
            f'<li class="{"diff" if diff else ""}">{"≠ " if diff else ""}<code>{esc(name)}</code>: '
            f"<code>{esc(as_json(value, 400))}</code>"
            + (f' <span class="rule">rule {esc(rule)}</span>' if rule else "")
            + "</li>"
        )
    return f'<ul class="args">{"".join(rows)}</ul>'


def _calls(case: Result, results: Mapping[Any, Any]) -> str:
    pairs = call_pairs(case)
    if not pairs:
        return '<p class="muted">No calls were expected and none were made.</p>'
    rows = []
    for p in pairs:
        check, exp, act = p["check"] or {}, p["expected"], p["actual"]
        changed = {str(d.get("param")) for d in check.get("diffs") or []}
        exp_cell = (
            f"<b>{esc(exp.get('tool'))}</b>" + _args(exp.get("params"), changed, exp.get("param_rules"))
            if exp
            else '<span class="muted">— (none expected)</span>'
        )
        act_cell, result_cell = '<span class="muted">— (not called)</span>', ""
        if act:
            ok = act.get("status") == "ok"
            state = (
                "✓ ok"
                if ok
                else f"✗ {act.get('status')}" + (f": {act['error_type']}" if act.get("error_type") else "")
            )
            args = (
                _args(act["arguments"], changed)
                if isinstance(act.get("arguments"), Mapping)
                else f'<code class="raw">{esc(clip(str(act.get("arguments_raw")), 400))}</code> '
                '<span class="muted">(not a JSON object: shown as sent)</span>'
            )
            act_cell = f"#{esc(act.get('ordinal'))} <b>{esc(act.get('tool'))}</b> "
            act_cell += f'<span class="status {"s-good" if ok else "s-bad"}">{esc(state)}</span>{args}'
            result = results.get(act.get("ordinal"))
            if result is not None:
                result_cell = f'<pre class="result">{esc(clip(str(result), RESULT_CHARS))}</pre>'
        status = status_badge(p["status"]) if p["status"] else ""
        message = f'<div class="muted">{esc(check.get("message"))}</div>' if check.get("message") else ""
        rows.append(f"<tr>{td(status + message)}{td(exp_cell)}{td(act_cell)}{td(result_cell)}</tr>")
    heads = ("rung 2 check", "expected call", "actual call", "tool result")
    return table(heads, rows, 'class="calls"')


def _json_cell(value: Any, limit: int = 400) -> str:
    return "—" if value is None else f"<code>{esc(as_json(value, limit))}</code>"


def _diffs(diffs: Sequence[Mapping[str, Any]]) -> str:  # argument_diffs' rows
    rows = (
        f'<tr class="diff-row">{td(esc(d["rung"]) + " " + esc(d["rung_name"]))}'
        f"{td(('#' + esc(d['ordinal']) + ' ' if d.get('ordinal') is not None else '') + esc(d.get('tool')))}"
        f"{td('<code>' + esc(d.get('param')) + '</code>')}"
        f"{td(_json_cell(d.get('expected')))}"
        f"{td('<code>≠ ' + esc(as_json(d.get('actual'), 400)) + '</code>', 'diff')}"
        f"{td(esc(d.get('rule')))}{td(esc(d.get('code')))}</tr>"
        for d in diffs
    )
    heads = ("rung", "call", "parameter", "expected", "actual", "rule", "class")
    return table(heads, rows, 'class="diffs"')


def _rungs(rungs: Sequence[RungEntry]) -> str:
    if not rungs:
        return '<p class="muted">No rung ran (the agent failed before anything could be judged).</p>'
    rows = []
    for r in rungs:
        scores = ", ".join(f"{k} {v:.2f}" for k, v in (r.get("scores") or {}).items() if v is not None)
        rows.append(
            f"<tr>{td(esc(r['rung']))}{td(esc(r['name']))}{td(status_badge(r['status']))}{td(esc(scores))}"
            f"{td(esc(r.get('explanation')))}</tr>"
        )
    return table(("tier", "rung", "status", "scores", "explanation"), rows, 'class="rungs"')


def _findings(findings: Sequence[FindingEntry]) -> str:
    rows = (
        f"<tr>{td(esc(f.get('rung')))}{td(esc(f.get('code')))}{td(esc(f.get('tool') or '—'))}"
        f"{td(esc(f.get('param') or '—'))}{td(_json_cell(f.get('expected'), 300))}"
        f"{td(_json_cell(f.get('actual'), 300))}{td(esc(f.get('message')))}</tr>"
        for f in findings
    )
    heads = ("rung", "code", "tool", "parameter", "expected", "actual", "message")
    return table(heads, rows, 'class="findings"')
