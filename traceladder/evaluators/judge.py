"""The verdict for one case: every rung evaluated, the seed-1 rules decide, the first failing rung
is recorded as `settled_at`, and the dominant failure class is named.

PASS iff every golden call is matched one-to-one (name + arguments under the case's rules, and
schema-valid); every unmatched actual call is ignorable — successful, schema-valid, fixture-valid,
read-only and in the effective whitelist (the case's `allowed_extra` replaces the default; an empty
list is strict); order holds when the case is order-sensitive; chains are connected (a
confirm/abort carries the action_id its request returned). Golden calls are matched before extra
reads are filtered, so a whitelisted read can still satisfy a golden call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from traceladder.cases.model import Case
from traceladder.domain.base import Domain
from traceladder.evaluators import partial_credit, schema, trajectory
from traceladder.evaluators.call_match import arguments_match, call_code, pair_calls
from traceladder.evaluators.types import ArgDiff, Call, CallCheck, Expected, Finding, RungResult, RungStatus

EVALUATOR_VERSION = "1.1.0"
# The dominant failure class is the first present in this order: the most specific, lowest-rung
# cause first, then call-level omissions, then trajectory problems.
CLASS_PRIORITY = (
    "UNKNOWN_TOOL",
    "TOOL_WRONG",
    "PARAM_MISSING",
    "PARAM_WRONG_FORMAT",
    "PARAM_HALLUCINATED_ID",
    "PARAM_WRONG_VALUE",
    "CALL_MISSING",
    "CALL_UNEXPECTED",
    "CALL_EXTRA",
    "ORDER_WRONG",
    "CHAIN_BROKEN",
)
CONFIRMATIONS = ("confirm_action", "abort_action")


@dataclass(frozen=True)
class JudgeContext:
    """What the judge needs from a domain, compiled once."""

    registry: schema.SchemaRegistry
    read_only: frozenset[str]
    default_whitelist: tuple[str, ...]
    id_fields: Mapping[str, frozenset[str]]
    confirmations: frozenset[str] = frozenset(CONFIRMATIONS)

    @staticmethod
    def from_domain(domain: Domain) -> JudgeContext:
        schemas = {name: domain.tool_schema(name) or {} for name in domain.tool_names}
        return JudgeContext(
            schema.SchemaRegistry(schemas),
            domain.read_only_tools,
            domain.default_whitelist,
            domain.id_fields,
            domain.confirmation_tools,
        )

    def unknown_ids(self, value: Any) -> list[tuple[str, Any]]:
        """(field, value) for every fixture-backed ID that does not exist, at any depth."""
        found: list[tuple[str, Any]] = []
        if isinstance(value, dict):
            for key, child in value.items():
                valid = self.id_fields.get(key)
                if valid is not None and isinstance(child, str | int) and child not in valid:
                    found.append((key, child))
                else:
                    found += self.unknown_ids(child)
        elif isinstance(value, list):
            for child in value:
                found += self.unknown_ids(child)
        return found


@dataclass(frozen=True)
class Verdict:
    verdict: str  # PASS | FAIL | SKIP | AGENT_ERROR
    failure_class: str | None
    settled_at: int | None
    rungs: tuple[RungResult, ...] = ()
    explanation: str = ""
    ignored: tuple[int, ...] = field(default=())  # ordinals of ignorable extra reads

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for r in self.rungs for f in r.findings)


def judge_case(
    case: Case, calls: Sequence[Call], ctx: JudgeContext, *, agent_error: str | None = None
) -> Verdict:
    """Judge one trace of one case. `agent_error` set means no normally scored result exists."""
    if case.skip:
        return Verdict("SKIP", None, None, explanation=f"skipped: {case.skip_reason}")
    if agent_error:
        return Verdict("AGENT_ERROR", None, None, explanation=f"agent error: {agent_error}")
    expected = [Expected(c.tool, c.params, c.param_rules) for c in case.calls]
    rung1 = schema.evaluate(calls, ctx.registry)

    def classify(call: Call, param: str, value: Any) -> str | None:
        if param in ctx.registry.bad_params(call):
            return "PARAM_WRONG_FORMAT"
        return "PARAM_HALLUCINATED_ID" if ctx.unknown_ids({param: value}) else None

    def valid(call: Call) -> bool:
        return ctx.registry.knows(call.name) and ctx.registry.check(call)[0] is None

    # Rungs 2 and 4 compare the same (expected, actual) pairs: compare each pair once.
    diff_cache: dict[tuple[int, int], tuple[ArgDiff, ...]] = {}

    def diffs_of(exp: Expected, call: Call) -> tuple[ArgDiff, ...]:
        key = (id(exp), id(call))
        found = diff_cache.get(key)
        if found is None:
            found = diff_cache[key] = arguments_match(exp, call, classify)
        return found

    pairing = pair_calls(calls, expected, valid=valid, classify=classify, compare=diffs_of)
    paired = {j for _, j in pairing.full} | {j for _, j, _ in pairing.partial}
    matched_expected = {i for i, _ in pairing.full} | {i for i, _, _ in pairing.partial}
    checks: list[CallCheck] = []
    findings: list[Finding] = []
    for i, j in pairing.full:
        checks.append(
            CallCheck("match", i, expected[i].name, calls[j].ordinal, calls[j].name, message="matched")
        )
    for i, j, diffs in pairing.partial:
        if not diffs:  # the golden arguments match, but the call as a whole is schema-invalid
            bad = "; ".join(msg for _, msg in ctx.registry.errors(calls[j])) or "schema-invalid"
            diffs = (ArgDiff("(arguments)", None, bad, "schema", "PARAM_WRONG_FORMAT"),)
        code = call_code(diffs)
        msg = f"{expected[i].name}: " + "; ".join(
            f"{d.param} {d.code} (expected {d.expected!r}, got {d.actual!r})" for d in diffs
        )
        checks.append(
            CallCheck("partial", i, expected[i].name, calls[j].ordinal, calls[j].name, code, diffs, msg)
        )
        findings += [
            Finding(2, d.code or "", msg, calls[j].name, d.param, d.expected, d.actual, calls[j].ordinal)
            for d in diffs
        ]
    whitelist = set(case.effective_whitelist(ctx.default_whitelist))
    leftovers = [j for j in range(len(calls)) if j not in paired]
    ignored = [j for j in leftovers if _ignorable(calls[j], whitelist, ctx, valid)]
    offending = [j for j in leftovers if j not in ignored]
    missing = [i for i in range(len(expected)) if i not in matched_expected]
    # An unmatched golden call and an offending call of another known tool, paired in order.
    candidates = [j for j in offending if ctx.registry.knows(calls[j].name)]
    wrong_tool = dict(zip(missing, candidates, strict=False))
    for i, j in wrong_tool.items():
        msg = f"expected {expected[i].name}, called {calls[j].name}"
        checks.append(
            CallCheck(
                "wrong_tool", i, expected[i].name, calls[j].ordinal, calls[j].name, "TOOL_WRONG", message=msg
            )
        )
        findings.append(
            Finding(
                2,
                "TOOL_WRONG",
                msg,
                calls[j].name,
                expected=expected[i].name,
                actual=calls[j].name,
                ordinal=calls[j].ordinal,
            )  # fmt: skip
        )
    for i in missing:
        if i in wrong_tool:
            continue
        msg = f"{expected[i].name} was never called"
        checks.append(CallCheck("missing", i, expected[i].name, code="CALL_MISSING", message=msg))
        findings.append(Finding(2, "CALL_MISSING", msg, expected[i].name, expected=expected[i].arguments))
    paired_wrong = set(wrong_tool.values())
    for j in offending:
        if j in paired_wrong:
            continue
        call = calls[j]
        # Rung 1 already reports an unknown tool as UNKNOWN_TOOL; here it is one more call that
        # should not have been made.
        code = "CALL_UNEXPECTED" if case.negative else "CALL_EXTRA"
        why = _why_not_ignorable(call, whitelist, ctx, valid)
        msg = f"{call.name}: {'unexpected' if case.negative else 'extra'} call ({why})"
        checks.append(CallCheck("extra", None, None, call.ordinal, call.name, code, message=msg))
        findings.append(
            Finding(
                2,
                code,
                msg,
                call.name,
                actual=call.arguments if call.parsed else call.raw,
                ordinal=call.ordinal,
            )
        )
    for j in ignored:
        checks.append(
            CallCheck(
                "ignored", None, None, calls[j].ordinal, calls[j].name, message="whitelisted read, ignored"
            )
        )
    rung2_ok = not findings
    n_exp, n_act = len(expected), len(calls) - len(ignored)
    rung2 = RungResult(
        2,
        "call_match",
        "pass" if rung2_ok else "fail",
        {
            "recall": len(pairing.full) / n_exp if n_exp else 1.0,
            "precision": len(pairing.full) / n_act if n_act else 1.0,
        },
        tuple(checks),
        tuple(findings),
        "every golden call matched; no unexpected calls"
        if rung2_ok
        else "; ".join(f.message for f in findings),
    )
    judged = [c for j, c in enumerate(calls) if j not in ignored]
    rung3 = _trajectory(case, expected, judged, calls, pairing)
    credit = _credit(diffs_of)
    rung4_scores = {
        "positional": partial_credit.positional(judged, expected, credit),
        "optimal": partial_credit.optimal(judged, expected, credit),
    }
    rung4 = RungResult(
        4,
        "partial_credit",
        "pass" if rung4_scores["optimal"] == 1.0 else "fail",
        rung4_scores,
        explanation=(
            f"tool-call accuracy {rung4_scores['optimal']:.2f} (positional {rung4_scores['positional']:.2f})"
        ),
    )
    rungs = (rung1, rung2, rung3, rung4)
    all_findings = [f for r in rungs[:3] for f in r.findings]
    if not all_findings and rung1.status != "fail":
        return Verdict(
            "PASS", None, 4, rungs, _pass_text(case, calls, ignored), tuple(calls[j].ordinal for j in ignored)
        )
    codes = {f.code for f in all_findings}
    dominant = next((c for c in CLASS_PRIORITY if c in codes), sorted(codes)[0] if codes else None)
    settled = next(r.rung for r in rungs if r.status == "fail")
    text = f"FAIL at rung {settled} ({rungs[settled - 1].name}): {dominant}: " + next(
        f.message for f in all_findings if f.code == dominant
    )
    return Verdict("FAIL", dominant, settled, rungs, text, tuple(calls[j].ordinal for j in ignored))


def _credit(diffs_of: Any) -> partial_credit.Credit:
    def credit(expected: Expected, call: Call) -> float:
        if expected.name != call.name:
            return 0.0
        return 0.5 if diffs_of(expected, call) else 1.0

    return credit


def _ignorable(call: Call, whitelist: set[str], ctx: JudgeContext, valid: Any) -> bool:
    return _why_not_ignorable(call, whitelist, ctx, valid) == ""


def _why_not_ignorable(call: Call, whitelist: set[str], ctx: JudgeContext, valid: Any) -> str:
    if not ctx.registry.knows(call.name):
        return "not a tool"
    if call.name not in ctx.read_only:
        return "mutations and confirmations are never ignorable"
    if call.name not in whitelist:
        return f"{call.name} is not in the whitelist {sorted(whitelist)}"
    if not valid(call):
        return "schema-invalid"
    if ctx.unknown_ids(call.arguments):
        return "references unknown fixture IDs"
    if not call.ok:
        return "the tool returned an error"
    return ""


def _trajectory(
    case: Case, expected: list[Expected], judged: list[Call], calls: Sequence[Call], pairing: Any
) -> RungResult:
    names = [c.name for c in judged]
    scores = trajectory.scores(names, [e.name for e in expected])
    findings: list[Finding] = []
    if case.order_sensitive and not pairing.order_respected:
        msg = f"calls out of order: expected {' → '.join(e.name for e in expected)}, got {' → '.join(names)}"
        findings.append(Finding(3, "ORDER_WRONG", msg, expected=[e.name for e in expected], actual=names))
    findings += _chain_findings(expected, calls, pairing)
    status: RungStatus = "skipped" if not expected else ("fail" if findings else "pass")
    text = "; ".join(f.message for f in findings) or (
        f"strict {scores['strict']:.2f}, unordered {scores['unordered']:.2f}, "
        f"subset {scores['subset']:.2f}, superset {scores['superset']:.2f}"
    )
    return RungResult(3, "trajectory", status, scores, (), tuple(findings), text)


def _chain_findings(expected: list[Expected], calls: Sequence[Call], pairing: Any) -> list[Finding]:
    """A confirm/abort must carry the action_id returned by the request it follows."""
    pairs = {i: j for i, j in pairing.full} | {i: j for i, j, _ in pairing.partial}
    findings = []
    for i, exp in enumerate(expected):
        if exp.name not in CONFIRMATIONS or i not in pairs:
            continue
        request = next((k for k in range(i - 1, -1, -1) if expected[k].name.startswith("request_")), None)
        confirm = calls[pairs[i]]
        given = confirm.arguments.get("action_id") if isinstance(confirm.arguments, dict) else None
        returned = None
        if request is not None and request in pairs:
            req_call = calls[pairs[request]]
            if isinstance(req_call.result, dict) and req_call.ordinal < confirm.ordinal:
                returned = req_call.result.get("action_id")
        if returned is None or given != returned:
            msg = f"{exp.name} used action_id {given!r}, but the request returned {returned!r} before it"
            findings.append(
                Finding(3, "CHAIN_BROKEN", msg, exp.name, "action_id", returned, given, confirm.ordinal)
            )
    return findings


def _pass_text(case: Case, calls: Sequence[Call], ignored: list[int]) -> str:
    if not case.calls:
        base = "no call was expected and none that matters was made"
    else:
        base = f"all {len(case.calls)} golden call(s) matched"
    if ignored:
        base += f"; ignored whitelisted read(s): {', '.join(calls[j].name for j in ignored)}"
    return base
