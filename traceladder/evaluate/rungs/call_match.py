"""Rung 2 — call match: is each expected call made, with the right arguments; are there calls
that should not have been made?

Needs a case. Per golden call: right function, then arguments under the case's rules (the golden
call names the keys compared; `exact` by default). Missing calls, extra calls (`CALL_EXTRA`, or
`CALL_UNEXPECTED` on a negative case) and a wrong tool in a golden call's place (`TOOL_WRONG`) are
findings of their own; whitelisted extra reads are ignored (see `analysis`). A golden-matching
call that the schema rejects is not a full match (`PARAM_WRONG_FORMAT`).
"""

from __future__ import annotations

from traceladder.evaluate.rungs.analysis import Analysis
from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.matching import call_code
from traceladder.evaluate.rungs.types import ArgDiff, CallCheck, Finding, RungResult

NUMBER = 2
NAME = "call_match"
NEEDS = frozenset({"case"})
SURVIVORS_ONLY = False


def evaluate(inputs: TraceInputs, analysis: Analysis) -> RungResult:
    a = analysis
    m = a.match
    calls, expected = a.calls, a.expected
    checks: list[CallCheck] = []
    findings: list[Finding] = []
    for i, j in m.pairing.full:  # positional arguments: the usual check, made once per matched call
        call = calls[j]
        checks.append(CallCheck("match", i, expected[i].name, call.ordinal, call.name, None, (), "matched"))
    for i, j, diffs in m.pairing.partial:
        if not diffs:  # the golden arguments match, but the call as a whole is schema-invalid
            bad = "; ".join(msg for _, msg in a.registry.errors(calls[j])) or "schema-invalid"
            diffs = (ArgDiff("(arguments)", None, bad, "schema", "PARAM_WRONG_FORMAT"),)
        message = f"{expected[i].name}: " + "; ".join(
            f"{d.param} {d.code} (expected {d.expected!r}, got {d.actual!r})" for d in diffs
        )
        checks.append(
            CallCheck(
                "partial",
                i,
                expected[i].name,
                calls[j].ordinal,
                calls[j].name,
                call_code(diffs),
                diffs,
                message,
            )
        )
        findings += [
            Finding(
                NUMBER, d.code or "", message, calls[j].name, d.param, d.expected, d.actual, calls[j].ordinal
            )
            for d in diffs
        ]
    for i, j in m.wrong_tool.items():
        message = f"expected {expected[i].name}, called {calls[j].name}"
        checks.append(
            CallCheck(
                "wrong_tool",
                i,
                expected[i].name,
                calls[j].ordinal,
                calls[j].name,
                "TOOL_WRONG",
                message=message,
            )
        )
        findings.append(
            Finding(
                NUMBER,
                "TOOL_WRONG",
                message,
                calls[j].name,
                expected=expected[i].name,
                actual=calls[j].name,
                ordinal=calls[j].ordinal,
            )  # fmt: skip
        )
    for i in m.missing:
        if i in m.wrong_tool:
            continue
        message = f"{expected[i].name} was never called"
        checks.append(CallCheck("missing", i, expected[i].name, code="CALL_MISSING", message=message))
        findings.append(
            Finding(
                NUMBER, "CALL_MISSING", message, expected[i].name, expected=expected[i].expected.arguments
            )
        )
    negative = a.case.negative
    placed = set(m.wrong_tool.values())
    for j in m.offending:
        if j in placed:
            continue
        call = calls[j]
        # Rung 1 already reports an unknown tool as UNKNOWN_TOOL; here it is one more call that
        # should not have been made.
        code = "CALL_UNEXPECTED" if negative else "CALL_EXTRA"
        message = (
            f"{call.name}: {'unexpected' if negative else 'extra'} call ({a.why_not_ignorable(call, j)})"
        )
        checks.append(CallCheck("extra", None, None, call.ordinal, call.name, code, message=message))
        findings.append(
            Finding(
                NUMBER,
                code,
                message,
                call.name,
                actual=call.arguments if call.parsed else call.raw,
                ordinal=call.ordinal,
            )  # fmt: skip
        )
    for j in m.ignored:
        checks.append(
            CallCheck(
                "ignored", None, None, calls[j].ordinal, calls[j].name, message="whitelisted read, ignored"
            )
        )
    n_expected, n_actual = len(expected), len(calls) - len(m.ignored)
    full = len(m.pairing.full)
    scores = {
        "recall": full / n_expected if n_expected else 1.0,
        "precision": full / n_actual if n_actual else 1.0,
    }
    if findings:
        return RungResult(
            NUMBER,
            NAME,
            "fail",
            scores,
            tuple(checks),
            tuple(findings),
            "; ".join(f.message for f in findings),
        )
    return RungResult(NUMBER, NAME, "pass", scores, tuple(checks), (), _pass_text(a))


def _pass_text(a: Analysis) -> str:
    base = (
        f"all {len(a.expected)} golden call(s) matched"
        if a.expected
        else "no call was expected and none that matters was made"
    )
    ignored = a.match.ignored
    if ignored:
        base += f"; ignored whitelisted read(s): {', '.join(a.calls[j].name for j in ignored)}"
    return base
