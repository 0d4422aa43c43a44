"""A ComparisonV1 as plain text for the terminal and CI logs (`traceladder compare`). Pure."""

from __future__ import annotations

from traceladder.report.build import dimension_label
from traceladder.report.documents import ComparisonSide, ComparisonV1, FlipEvidence, SideRate
from traceladder.text import printable


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def pp(value: float | None) -> str:
    """A difference of rates in percentage points, signed."""
    return "—" if value is None else f"{value * 100:+.1f} pp"


def _rate(block: SideRate) -> str:
    low, high = block["interval"]
    return f"{pct(block['rate'])} ({block['passed']}/{block['scored']}) [{low:.1%}, {high:.1%}]"


def _side(name: str, block: ComparisonSide) -> str:
    trials = "/".join(str(k) for k in block["trials_per_case"]) or "0"
    return f"{name}: {', '.join(block['runs'])} — model {block['model']}, {trials} trial(s) per case"


def _why(evidence: FlipEvidence | None) -> str:
    """The failing side's reason on one line: its class and first finding (or explanation)."""
    return " ".join(_reason(evidence).split())


def _reason(evidence: FlipEvidence | None) -> str:
    if not evidence:
        return ""
    finding = evidence.get("finding")
    said = evidence.get("failure_class") or evidence["verdict"]
    if finding and finding.get("message"):
        return f"{said}: {finding['message']}"
    return f"{said}: {evidence.get('explanation') or ''}".strip()


_NOTHING_DIFFERS = "nothing recorded (same model and inputs)"


def _named(difference: str, cmp: ComparisonV1) -> str:
    """A difference as a line shows it; an agent's version with both values (short commits)."""
    if difference != "agent_version":
        return difference
    a, b = (str(cmp[side].get("agent_version") or "none")[:12] for side in ("a", "b"))
    return f"agent_version ({a} → {b})"


def render_comparison(cmp: ComparisonV1, *, max_flips: int = 50) -> str:
    """Every number of the comparison, one fact per line; flips with the failing side's evidence."""
    t = cmp["mcnemar"]
    lines = [
        _side("A", cmp["a"]),
        _side("B", cmp["b"]),
        f"differs: {', '.join(_named(d, cmp) for d in cmp['differs']) or _NOTHING_DIFFERS}",
        f"paired cases: {cmp['paired_cases']}"
        + (f"; only in A: {len(cmp['only_a'])}" if cmp["only_a"] else "")
        + (f"; only in B: {len(cmp['only_b'])}" if cmp["only_b"] else "")
        + (f"; no scored trial: {len(cmp['unpaired'])}" if cmp["unpaired"] else ""),
        f"a case passes a side when all of its first {'/'.join(map(str, cmp['k'])) or '0'} scored trial(s) "
        "passed (AGENT_ERROR does not pass; SKIP is no trial)",
        "",
    ]
    titles = {row["dimension"]: row["title"] for row in cmp["dimensions"] if row.get("title")}
    labels = [dimension_label(row["dimension"], titles) for row in cmp["dimensions"]]
    width = max([10, *map(len, labels)])
    lines.append(
        f"{'dimension':<{width}} {'A pass rate':<30} {'B pass rate':<30} "
        f"{'delta':>9} {'regr.':>6} {'impr.':>6}"
    )
    for label, row in zip(labels, cmp["dimensions"], strict=True):
        lines.append(
            f"{label:<{width}} {_rate(row['a']):<30} {_rate(row['b']):<30} {pp(row['delta']):>9} "
            f"{row['regressed']:>6} {row['improved']:>6}"
        )
    if cmp["classes"]:
        lines += ["", f"{'failure class':<26} {'A':>5} {'B':>5} {'delta':>6}"]
        lines += [
            f"{c['failure_class']:<26} {c['a']:>5} {c['b']:>5} {c['delta']:>+6}" for c in cmp["classes"]
        ]
    flips = cmp["flips"]
    lines += [
        "",
        f"flips ({len(flips)}: {t['b']} regressed A PASS → B FAIL, {t['c']} improved A FAIL → B PASS)",
    ]
    for f in flips[:max_flips]:
        arrow = f"{f['a']} → {f['b']}"
        trials = f" [{' '.join(f['a_verdicts'])} | {' '.join(f['b_verdicts'])}]" if f["k"] > 1 else ""
        lines.append(
            f"  {f['case_id']:<12} {f['dimension'] or '—':<4} {arrow:<12} {_why(f['evidence'])}{trials}"
        )
    if len(flips) > max_flips:
        lines.append(f"  … {len(flips) - max_flips} more (--format json lists all)")
    lines += [
        "",
        f"McNemar exact test: b={t['b']} (A pass, B fail), c={t['c']} (A fail, B pass), "
        f"both pass {t['both_pass']}, both fail {t['both_fail']}; p={t['p_value']:.4g} "
        f"(two-sided, alpha {t['alpha']:g})",
        f"conclusion: {t['conclusion']}",
    ]
    return "\n".join(printable(line) for line in lines) + "\n"
