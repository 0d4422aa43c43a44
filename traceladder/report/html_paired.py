"""The HTML report's paired-comparison section (`report --format html --compare RUN`): the
ComparisonV1 that `traceladder compare RUN THIS` prints — McNemar's exact test, the pass rate per
dimension with its interval, the failure classes before and after, and each flip with the failing
side's evidence. The same dict, so the page and the command cannot disagree."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traceladder.report.build import dimension_label
from traceladder.report.html_text import esc, pct, signed_pp, table, td


def _rate(block: Mapping[str, Any]) -> str:
    low, high = block["interval"]
    return f"{pct(block['rate'])} ({block['passed']}/{block['scored']}) [{pct(low)}–{pct(high)}]"


def _reason(evidence: Mapping[str, Any] | None) -> str:
    if not evidence:
        return ""
    finding = evidence.get("finding") or {}
    return str(finding.get("message") or evidence.get("explanation") or "")


def paired_section(cmp: Mapping[str, Any]) -> str:
    """One `<section id="paired">`; every number printed as text."""
    t = cmp["mcnemar"]
    a, b = cmp["a"], cmp["b"]
    out = [
        '<section id="paired"><h2>Paired comparison (McNemar)</h2>',
        f"<p>A = <code>{esc(', '.join(a['runs']))}</code> ({esc(a['model'])}), B = this run "
        f"(<code>{esc(b['model'])}</code>); differs: {esc(', '.join(cmp['differs']) or 'nothing recorded')}. "
        f'<span id="paired-cases">{cmp["paired_cases"]}</span> paired cases; a case passes a side when '
        "all its compared trials passed (AGENT_ERROR does not pass).</p>",
        f'<p id="mcnemar">McNemar exact test: b = <b id="mcnemar-b">{t["b"]}</b> (A pass, B fail), '
        f'c = <b id="mcnemar-c">{t["c"]}</b> (A fail, B pass), both pass {t["both_pass"]}, both fail '
        f'{t["both_fail"]}; p = <b id="mcnemar-p">{t["p_value"]:.4g}</b> (two-sided, alpha {t["alpha"]:g}): '
        f'<b id="mcnemar-conclusion">{esc(t["conclusion"])}</b>.</p>',
    ]
    titles = {r["dimension"]: r["title"] for r in cmp["dimensions"] if r.get("title")}
    rows = (
        f"<tr>{td(esc(dimension_label(r['dimension'], titles)))}"
        f"{td(_rate(r['a']), 'num')}{td(_rate(r['b']), 'num')}"
        f"{td(signed_pp(r['delta']), 'num delta')}{td(r['regressed'], 'num')}{td(r['improved'], 'num')}</tr>"
        for r in cmp["dimensions"]
    )
    heads = ("dimension", "A pass rate [95%]", "B pass rate [95%]", "difference", "regressed", "improved")
    out.append(table(heads, rows, 'id="paired-dimensions"'))
    if cmp["classes"]:
        rows = (
            f"<tr>{td(esc(c['failure_class']))}{td(c['a'], 'num')}{td(c['b'], 'num')}"
            f"{td(format(c['delta'], '+d'), 'num')}</tr>"
            for c in cmp["classes"]
        )
        out.append(table(("failure class", "A", "B", "difference"), rows, 'id="paired-classes"'))
    if cmp["flips"]:
        rows = (
            f"<tr>{td(esc(f['case_id']))}{td(esc(f['dimension'] or '—'))}{td(esc(f['a'] + ' → ' + f['b']))}"
            f"{td(esc((f['evidence'] or {}).get('failure_class') or ''))}"
            f"{td(esc(_reason(f['evidence'])))}</tr>"
            for f in cmp["flips"]
        )
        flip_heads = ("case", "dim.", "A → B", "class (failing side)", "evidence")
        out.append(table(flip_heads, rows, 'id="paired-flips"'))
    return "".join(out) + "</section>"
