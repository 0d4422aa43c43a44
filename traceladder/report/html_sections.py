"""The HTML report's summary sections after the headline: the cost ladder, pass rates by dimension
and tool, failure classes, the comparison with another run, the trend per deploy. Each returns one
`<section>`; numbers are printed as text beside every chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from traceladder.evaluate.rungs import judge as judge_rung
from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.report.build import dimension_label
from traceladder.report.documents import ReportV1
from traceladder.report.html_cases import verdict_badge
from traceladder.report.html_data import (
    Comparison,
    Rate,
    by_tool,
    case_name,
    ladder_reach,
    rate_of,
)
from traceladder.report.html_digest import PageDigest
from traceladder.report.html_svg import Bar, bars, rate_bar
from traceladder.report.html_text import esc, pct, signed_pp, table, td
from traceladder.report.judge_text import judge_sentence

_STATUSES = ("pass", "fail", "skipped", "not_evaluated")


def interval(rate: Rate) -> str:
    ci = rate.interval
    return "—" if ci is None else f"{pct(ci[0])}–{pct(ci[1])}"


def not_evaluated(digest: PageDigest, where: Mapping[str, int]) -> str:
    """Once for the run: each rung that could not run on some traces, on how many (by verdict) and
    why — the note a PASS's explanation ends with, which the case table leaves off
    (`html_cases.shown_explanation`). Empty when every rung ran on every judged trace."""
    traces = digest.not_run
    if not traces:
        return ""
    items = []
    for name, seen in traces.items():
        by_verdict = ", ".join(f"{n} {v}" for v, n in seen.verdicts.most_common())
        why = "; ".join(f"{esc(text)}" + (f" ({n})" if len(seen.reasons) > 1 else "")
                        for text, n in seen.reasons.most_common())  # fmt: skip
        count = seen.traces.count
        which = f": {links(seen.traces.first, where)}" if count <= 8 else ""
        items.append(
            f'<li data-rung="{esc(name)}"><b>{esc(name)}</b> did not run on <b class="not-evaluated-count">'
            f"{count}</b> of {digest.total} traces ({esc(by_verdict)}){which} — {why}</li>"
        )
    return (
        '<div class="note" id="not-evaluated"><p>Rungs that could not run: a PASS of such a trace means '
        "every rung that <i>did</i> run passed. Said once here rather than at the end of every PASS "
        "explanation; each case's rungs table shows the status.</p>"
        f"<ul>{''.join(items)}</ul></div>"
    )


def ladder(report: ReportV1, digest: PageDigest, where: Mapping[str, int] | None = None) -> str:
    rungs = report["summary"].get("ladder") or []
    reach = ladder_reach(report, digest)
    out = [
        '<section id="ladder"><h2>The cost ladder</h2><p>Each trace is settled by the cheapest rung that '
        "can: a FAIL by the first rung that fails, a PASS by the highest rung that ran. Schema and "
        "invariants share tier 1.</p>"
    ]
    if reach.top_rung is not None:
        unsettled = digest.unsettled
        why = esc(", ".join(f"{n} {v}" for v, n in unsettled.items()))
        top = f"{reach.top_rung} {esc(' / '.join(reach.top_names))}"
        out.append(
            f'<p id="ladder-reach"><b id="reached-top">{reach.reached_top}</b> of {reach.total} traces '
            f"reached the top rung ({top})"
            + (f"; <b>{reach.unsettled}</b> were settled by no rung ({why}: nothing a rung could judge)"
               if reach.unsettled else "")
            + ".</p>"
        )  # fmt: skip
    out.append(not_evaluated(digest, where or {}))
    judge = report["summary"].get("judge")
    if judge:
        out.append(f'<p class="note" id="judge">{esc(judge_sentence(judge))}</p>')
    elif reach.top_rung is not None:
        out.append(
            f'<p class="note" id="no-judge">No judge was configured, so rung {judge_rung.NUMBER} did not '
            "run: every trace was settled by code (see --judge-model).</p>"
        )
    chart = [
        Bar(
            f"{r['rung']} {r['name']}",
            [(r["settled_fail"], "fail", f"{r['settled_fail']} FAIL settled"),
             (r["settled_pass"], "pass", f"{r['settled_pass']} PASS settled")],
            f"{r['settled_fail']} ✗ FAIL · {r['settled_pass']} ✓ PASS",
        )
        for r in rungs
    ]  # fmt: skip
    out.append(bars(chart, title="traces settled by each rung"))
    rows = []
    for r in rungs:
        st = r["statuses"]
        counts = [st.get("pass", 0) + st.get("fail", 0), *(st.get(s, 0) for s in _STATUSES)]
        rows.append(
            f'<tr data-rung="{esc(r["name"])}">{td(esc(r["rung"]))}{td(esc(r["name"]))}'
            + "".join(td(n, "num") for n in counts)
            + td(r["settled_fail"], "num settled-fail")
            + td(r["settled_pass"], "num settled-pass")
            + "</tr>"
        )
    heads = ("tier", "rung", "ran", "✓ pass", "✗ fail", "– skipped", "? not evaluated", "settled FAIL",
             "settled PASS")  # fmt: skip
    return "".join(out) + table(heads, rows, 'class="ladder"') + "</section>"


def _rate_table(first: str, rows: Sequence[tuple[str, Rate, Sequence[Any]]], extra: Sequence[str]) -> str:
    body = (
        f"<tr>{td(esc(name))}{td(r.scored, 'num')}{td(r.passed, 'num')}{td(pct(r.value), 'num')}"
        f"{td(interval(r))}{''.join(td(esc(x), 'num') for x in more)}</tr>"
        for name, r, more in rows
    )
    return table((first, "scored", "✓ passed", "pass rate", "95% interval", *extra), body)


def rates(report: ReportV1, digest: PageDigest) -> str:
    summary = report["summary"]
    names = summary.get("dimension_names")
    dims = [(dimension_label(d, names), rate_of(b), b) for d, b in summary["dimensions"].items()]
    tools = by_tool(report, digest)
    out = ['<section id="rates"><h2>Pass rate by dimension and by tool</h2>']
    if dims:
        title = "pass rate by dimension, with 95% intervals"
        out.append(
            bars([rate_bar(d, r.passed, r.scored, r.interval) for d, r, _ in dims], title=title, scale=1)
        )
        rows = [
            (d, r, [b["verdict_counts"].get(v, 0) for v in (VerdictValue.AGENT_ERROR, VerdictValue.SKIP)])
            for d, r, b in dims
        ]
        out.append(_rate_table("dimension", rows, ("⚠ agent errors", "– skipped")))
    else:
        out.append('<p class="muted">These traces carry no dimension.</p>')
    out.append(
        "<h3>By tool</h3><p>Scored traces that expected or called the tool; <i>implicated</i> counts "
        "the failing traces a finding names the tool in.</p>"
    )
    if tools:
        chart = [rate_bar(t["tool"], t["rate"].passed, t["rate"].scored, t["rate"].interval) for t in tools]
        out.append(bars(chart, title="pass rate by tool, with 95% intervals", scale=1))
        rows = [(t["tool"], t["rate"], [t["implicated"]]) for t in tools]
        out.append(_rate_table("tool", rows, ("implicated",)))
    return "".join(out) + "</section>"


def links(names: Sequence[str], where: Mapping[str, int], limit: int = 8, count: int | None = None) -> str:
    """Case names, each a link to its row when the table shows it; `count`: how many names the
    list has in all, when `names` holds only its first ones."""
    count = len(names) if count is None else count
    shown = [f'<a href="#case-{where[n]}">{esc(n)}</a>' if n in where else esc(n) for n in names[:limit]]
    return ", ".join(shown) + (f" and {count - limit} more" if count > limit else "")


def classes(report: ReportV1, digest: PageDigest, where: Mapping[str, int]) -> str:
    taxonomy = report["summary"]["taxonomy_counts"]
    out = '<section id="classes"><h2>Failure classes</h2>'
    if not taxonomy:
        return out + '<p class="muted">No trace failed.</p></section>'
    total = sum(taxonomy.values())
    chart = [Bar(str(c), [(n, "fail", f"{n} failing traces")], f"{n} ({n / total:.0%} of FAILs)")
             for c, n in taxonomy.items()]  # fmt: skip
    cases = digest.fail_cases
    rows = (
        f"<tr>{td(esc(c))}{td(n, 'num')}"
        f"{td(links(cases[str(c)].first, where, count=cases[str(c)].count) if str(c) in cases else '')}</tr>"
        for c, n in taxonomy.items()
    )
    chart_html = bars(chart, title="failing traces by dominant failure class")
    return out + chart_html + table(("class", "traces", "cases"), rows) + "</section>"


def _delta(a: Rate, b: Rate) -> str:
    return signed_pp(None if a.value is None or b.value is None else a.value - b.value)


def compare(comparison: Comparison, where: Mapping[str, int]) -> str:
    other = comparison.other_run
    (_, mine, theirs), *_ = comparison.dimensions
    out = [
        f'<section id="compare"><h2>Compared with run <span class="mono">{esc(other.get("run_id"))}</span>'
        f"</h2><p>That run: model <code>{esc(other.get('model'))}</code>, started "
        f"{esc(other.get('started_at'))}. Pass rate {pct(mine.value)} here, {pct(theirs.value)} there: "
        f'<b id="delta-all">{_delta(mine, theirs)}</b>.</p>'
    ]
    rows = (
        f"<tr>{td(esc(d))}{td(f'{pct(a.value)} ({a.passed}/{a.scored})', 'num')}"
        f"{td(f'{pct(b.value)} ({b.passed}/{b.scored})', 'num')}{td(_delta(a, b), 'num delta')}</tr>"
        for d, a, b in comparison.dimensions
    )
    out.append(table(("dimension", "this run", "that run", "difference"), rows, 'id="delta-dimensions"'))
    out.append(f'<h3>Verdicts that flipped (<span id="flip-count">{len(comparison.flips)}</span>)</h3>')
    if comparison.flips:
        flips = (
            f"<tr>{td(links([case_name(f['case'])], where))}{td(esc(f['case'].get('dimension') or '—'))}"
            f"{td(verdict_badge(f['before']) + ' → ' + verdict_badge(f['after']))}"
            f"{td(esc(f['case'].get('taxonomy') or '—'))}{td(esc(f['case'].get('explanation')))}</tr>"
            for f in comparison.flips
        )
        heads = ("case", "dim.", "that run → this run", "class now", "explanation now")
        out.append(table(heads, flips, 'id="flips"'))
    else:
        out.append('<p class="muted">No case changed its verdict.</p>')
    if comparison.only_here or comparison.only_there:
        out.append(
            f"<p>{comparison.only_here} case(s) only in this run, {comparison.only_there} only in that "
            "one (not compared).</p>"
        )
    return "".join(out) + "</section>"


def trend(rows: Sequence[Mapping[str, Any]]) -> str:
    """`rows`: `trend_by_version` rows with a `label`, a `drop` sentence and `flagged`."""
    out = (
        '<section id="trend"><h2>Trend by service.version</h2><p>Every judged trace in the store, not only '
        "this window, per deploy in the order each version was first seen: the numbers "
        "<code>traceladder trend</code> prints. The pass rate is PASS / (PASS + FAIL), as above; the "
        "success rate also counts AGENT_ERROR as a failure (a crash in production failed its user).</p>"
    )
    if not rows:
        return out + '<p class="muted">No judged trace records a service.</p></section>'
    chart = [
        Bar(
            str(t["label"]),
            [(t["pass_rate"] or 0.0, "pass", f"{pct(t['pass_rate'])} passed")],
            f"{pct(t['pass_rate'])} ({t['passed']:g}/{t['scored']:g})"
            + (" ▼ drop" if t.get("flagged") else ""),
            (t["ci_low"], t["ci_high"]) if t["ci_low"] is not None else None,
        )
        for t in rows
    ]
    body = (
        f"<tr>{td(esc(t['label']))}{td(format(t['traces'], 'g'), 'num')}{td(format(t['scored'], 'g'), 'num')}"
        f"{td(pct(t['pass_rate']), 'num')}{td(pct(t['ci_low']) + '–' + pct(t['ci_high']))}"
        f"{td(pct(t['success_rate']), 'num')}{td(esc(t.get('drop') or ''))}</tr>"
        for t in rows
    )
    heads = (
        "deploy",
        "traces",
        "scored",
        "pass rate",
        "95% interval",
        "success rate",
        "against the previous deploy",
    )
    chart_html = bars(chart, title="pass rate per deploy, with 95% intervals", scale=1)
    return out + chart_html + table(heads, body) + "</section>"
