"""What the reference rungs (2 call match, 3 trajectory, 4 partial credit) share about one trace,
computed once: the compiled expected calls, each pair's argument diffs, the optimal pairing, and
which unmatched calls a case's whitelist lets go.

Seed 1's rules, in one place: golden calls are matched one-to-one *before* extra reads are
filtered (a whitelisted tool can still be the golden call); an unmatched call is ignorable only if
it is a successful, schema-valid, fixture-valid read-only call in the effective whitelist (the
case's `allowed_extra` replaces the domain default; an empty list is strict).

This is the hot path of evaluation, so it avoids `functools.cached_property` (which takes a lock
on every first access in Python 3.11) and computes the whole match in one pass, on first use.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from traceladder.evaluate.rungs.inputs import DomainRules, TraceInputs
from traceladder.evaluate.rungs.matching import CompiledExpected, Pairing, pair_calls
from traceladder.evaluate.rungs.schema import SchemaRegistry
from traceladder.evaluate.rungs.types import ArgDiff, Call, Expected
from traceladder.suite.cases.model import Case

# Compiled expected calls per case, shared by every trace of that case in this process. Keyed by
# id(case) with the case kept in the value, so an id is never reused while cached.
_COMPILED: dict[tuple[int, bool], tuple[Case, tuple[CompiledExpected, ...], frozenset[str] | None]] = {}


def compiled_expected(case: Case, whole_arguments: bool = False) -> tuple[CompiledExpected, ...]:
    return _compiled(case, whole_arguments)[1]


def _compiled(
    case: Case, whole_arguments: bool = False
) -> tuple[Case, tuple[CompiledExpected, ...], frozenset[str] | None]:
    """`whole_arguments` (a domain's choice): a golden call without parameter rules compares the
    whole argument object, so an argument it does not name is a difference (seed 2's exact match)."""
    hit = _COMPILED.get((id(case), whole_arguments))
    if hit is None or hit[0] is not case:
        compiled = tuple(
            CompiledExpected.of(
                Expected(c.tool, c.params, None if whole_arguments and not c.param_rules else c.param_rules)
            )
            for c in case.calls
        )
        extra = None if case.allowed_extra is None else frozenset(case.allowed_extra)
        hit = _COMPILED[(id(case), whole_arguments)] = (case, compiled, extra)
    return hit


# What one (expected call, actual call) comparison and one unmatched call's ignorability come to
# are kept across traces, in memos the tool registry carries (`SchemaRegistry.pair_diffs`,
# `.ignorable`: they live as long as the evaluation's context, never longer). Each is a pure
# function of the compiled expected call (or the case's whitelist), the domain's schemas and rules,
# and the call as recorded — its name, its argument text (which decides its parsed arguments, as
# the schema memo already relies on), and for ignorability its status. Distinct traces mostly
# differ in one call; the others' comparisons repeat across traces. Keyed by identities, with the
# objects kept in the value (an id is never reused while cached). A call with no argument text is
# not cached.
_MEMO_LIMIT = 200_000


class Match(NamedTuple):
    """The outcome of matching a trace's calls against its case (indices into the call list). A
    named tuple, like the other values made once per trace on the hot path (see `types`)."""

    pairing: Pairing
    paired_actual: frozenset[int]
    ignored: tuple[int, ...]  # unmatched calls the whitelist lets go
    offending: tuple[int, ...]  # unmatched calls that count against the trace
    missing: tuple[int, ...]  # expected calls with no actual call
    wrong_tool: dict[int, int]  # expected i → an offending call of another known tool, in order
    judged: tuple[Call, ...]  # what rungs 3 and 4 score: every call but the ignored reads


class Analysis:
    """Per-trace facts for the reference rungs. Only valid for inputs with a case, tool schemas and
    domain rules (which the assembler always supplies together)."""

    __slots__ = ("inputs", "calls", "_diffs", "_valid", "_match", "_expected", "_whitelist", "_bad", "_why")

    def __init__(self, inputs: TraceInputs) -> None:
        self.inputs = inputs
        self.calls = inputs.calls
        self._diffs: dict[tuple[int, int], tuple[ArgDiff, ...]] = {}
        self._valid: dict[int, bool] = {}
        self._match: Match | None = None
        self._expected: tuple[CompiledExpected, ...] | None = None
        self._whitelist: frozenset[str] | None = None
        self._bad: dict[int, set[str]] = {}  # id(call) → its schema-invalid parameters (calls live as long)
        self._why: dict[int, str] = {}  # call index → why it may not be ignored ("" when it may)

    @property
    def case(self) -> Case:
        assert self.inputs.case is not None
        return self.inputs.case

    @property
    def registry(self) -> SchemaRegistry:
        assert self.inputs.tools is not None
        return self.inputs.tools

    @property
    def rules(self) -> DomainRules:
        assert self.inputs.rules is not None
        return self.inputs.rules

    @property
    def expected(self) -> tuple[CompiledExpected, ...]:
        if self._expected is None:
            rules = self.inputs.rules
            self._expected = compiled_expected(self.case, rules is not None and rules.whole_arguments)
        return self._expected

    @property
    def whitelist(self) -> frozenset[str]:
        if self._whitelist is None:
            extra = _compiled(self.case)[2]
            self._whitelist = frozenset(self.rules.default_whitelist) if extra is None else extra
        return self._whitelist

    @property
    def compared(self) -> dict[tuple[int, int], tuple[ArgDiff, ...]]:
        """Every (expected i, actual j) pair compared so far, with its diffs: after `match` when
        some expected call is not fully matched, every pair of the same tool name."""
        return self._diffs

    @property
    def matched(self) -> bool:
        """Whether the match has been computed (the ladder reports ignored reads only then)."""
        return self._match is not None

    # -- per call ----------------------------------------------------------------------------

    def valid(self, j: int) -> bool:
        """Call j names a known tool and its arguments are schema-valid."""
        found = self._valid.get(j)
        if found is None:
            found = self._valid[j] = self.registry.valid(self.calls[j])
        return found

    def _bad_params(self, call: Call) -> set[str]:
        bad = self._bad.get(id(call))
        if bad is None:  # once per call: every expected call compared with it asks
            bad = self._bad[id(call)] = self.registry.bad_params(call)
        return bad

    def classify(self, call: Call, param: str, value: Any) -> str | None:
        if param in self._bad_params(call):
            return "PARAM_WRONG_FORMAT"
        # `has_unknown_id({param: value})`, without building the dict for a plain id
        if isinstance(value, str | int):
            known = self.rules.id_fields.get(param)
            return "PARAM_HALLUCINATED_ID" if known is not None and value not in known else None
        if isinstance(value, dict | list):
            return "PARAM_HALLUCINATED_ID" if self.rules.has_unknown_id(value) else None
        return None

    def diffs(self, i: int, j: int) -> tuple[ArgDiff, ...]:
        """Expected i against actual j, computed once (rungs 2 and 4 compare the same pairs).

        The exact-match pass first: the comparison without classifying. When it finds no
        difference and the schema rejects none of the call's parameters, classifying could add
        none (it only turns a difference into a finer class, or a schema-rejected parameter into
        PARAM_WRONG_FORMAT), so the usual pair — the agent made the expected call — is compared
        once, with no classifier call per parameter."""
        found = self._diffs.get((i, j))
        if found is None:
            expected, call = self.expected[i], self.calls[j]
            rules, memo = self.inputs.rules, self.registry.pair_diffs
            raw = call[2]  # call.raw
            key = (id(expected), id(rules), call[0], raw, call[6]) if raw is not None else None
            hit = memo.get(key) if key is not None else None
            if hit is not None and hit[0] is expected and hit[1] is rules:
                found = hit[2]
            else:
                found = expected.diffs(call)
                if found or self._bad_params(call):
                    found = expected.diffs(call, self.classify)
                if key is not None:
                    if len(memo) >= _MEMO_LIMIT:
                        memo.clear()
                    memo[key] = (expected, rules, found)
            self._diffs[(i, j)] = found
        return found

    def why_not_ignorable(self, call: Call, j: int) -> str:
        """Why an unmatched call counts against the trace ("" when it may be ignored). Each rule
        returns its own reason, and that reason is the finding's message. Worked out once per
        call: the match asks, and rung 2 asks again for its message."""
        if call is self.calls[j]:
            found = self._why.get(j)
            if found is None:
                found = self._why[j] = self._why_shared(call, j)
            return found
        return self._why_not_ignorable(call, j)

    def _why_shared(self, call: Call, j: int) -> str:
        """`_why_not_ignorable`, through the registry's memo (`SchemaRegistry.ignorable`)."""
        if call.raw is None:
            return self._why_not_ignorable(call, j)
        rules, memo = self.inputs.rules, self.registry.ignorable
        key = (id(rules), self.whitelist, call.name, call.raw, call.parsed, call.ok)
        hit = memo.get(key)
        if hit is not None and hit[0] is rules:
            return hit[1]
        found = self._why_not_ignorable(call, j)
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        memo[key] = (rules, found)
        return found

    def _why_not_ignorable(self, call: Call, j: int) -> str:
        if not self.registry.knows(call.name):
            return "not a tool"
        if call.name not in self.rules.read_only:
            return "mutations and confirmations are never ignorable"
        if call.name not in self.whitelist:
            return f"{call.name} is not in the whitelist {sorted(self.whitelist)}"
        if not self.valid(j):
            return "schema-invalid"
        if self.rules.has_unknown_id(call.arguments):
            return "references unknown fixture IDs"
        if not call.ok:
            return "the tool returned an error"
        return ""

    # -- the trace ---------------------------------------------------------------------------

    @property
    def match(self) -> Match:
        if self._match is None:
            self._match = self._compute()
        return self._match

    def _compute(self) -> Match:
        calls, expected = self.calls, self.expected
        pairing = pair_calls(calls, expected, valid=self.valid, compare=self.diffs)
        full, partial = pairing.full, pairing.partial
        paired = frozenset([j for _, j in full] + [j for _, j, _ in partial])
        ignored: list[int] = []
        offending: list[int] = []
        if len(paired) < len(calls):
            why = self.why_not_ignorable
            for j, call in enumerate(calls):
                if j not in paired:
                    (offending if why(call, j) else ignored).append(j)
        missing: tuple[int, ...] = ()
        wrong_tool: dict[int, int] = {}
        if len(full) + len(partial) < len(expected):  # the usual trace matched every expected call
            matched = {i for i, _ in full} | {i for i, _, _ in partial}
            missing = tuple(i for i in range(len(expected)) if i not in matched)
            candidates = [j for j in offending if self.registry.knows(calls[j].name)]
            wrong_tool = dict(zip(missing, candidates, strict=False))
        skip = set(ignored)
        judged = tuple(c for j, c in enumerate(calls) if j not in skip) if skip else calls
        return Match(pairing, paired, tuple(ignored), tuple(offending), missing, wrong_tool, judged)

    @property
    def ignored_ordinals(self) -> tuple[int, ...]:
        return tuple(self.calls[j].ordinal for j in self.match.ignored)
