"""Values the rungs exchange. All immutable: evaluators take data in and give results out.

The values made once per call or per check (`Call`, `ArgDiff`, `CallCheck`, `Finding`) are named
tuples: a frozen dataclass pays an `object.__setattr__` per field on construction, and judging
makes millions of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, NamedTuple

RungStatus = Literal["pass", "fail", "skipped", "not_evaluated"]


class VerdictValue(StrEnum):
    """A trace's verdict: the one owner of these five words. A `StrEnum`, so each member *is* its
    string — stored rows, JSON reports and SQL filters read exactly `PASS`, `FAIL`, … as before,
    and a report loaded back from JSON compares equal to the members."""

    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"
    AGENT_ERROR = "AGENT_ERROR"
    NOT_EVALUATED = "NOT_EVALUATED"  # no rung could run at all


# In report order: seed 1's four verdicts, then the open path's.
VERDICTS: tuple[VerdictValue, ...] = tuple(VerdictValue)
# The verdicts a rate counts (PASS / scored): the reports', the gate's and the trend's denominator.
SCORED: tuple[VerdictValue, ...] = (VerdictValue.PASS, VerdictValue.FAIL)
# Traces that are counted but never rated.
UNRATED: tuple[VerdictValue, ...] = (VerdictValue.SKIP, VerdictValue.NOT_EVALUATED)


def not_evaluated_note(rung_names: Sequence[str]) -> str:
    """What a PASS's explanation ends with when rungs could not run on the trace (empty when every
    rung ran). `settle_results` appends it and keeps it as `Verdict.note` too, so the explanation
    without it (`Verdict.reason`) is stored and reported as its own field: no reader takes it off
    the text again."""
    return f" (not evaluated: {', '.join(rung_names)})" if rung_names else ""


class Call(NamedTuple):
    """One actual tool call as the ladder sees it.

    `arguments` is the parsed JSON (any type; None when the raw text did not parse), `raw` the
    text the model sent. `ok` is False when the tool returned an error; `result` is the parsed
    tool result (used to follow action ids through chains).
    """

    name: str
    arguments: Any = None
    raw: str | None = None
    ok: bool = True
    result: Any = None  # parsed where a rung needs it (the results of chain requests)
    ordinal: int = 0
    parsed: bool = True  # False when `raw` was not valid JSON
    result_raw: str | None = None  # the tool result exactly as recorded


@dataclass(frozen=True)
class Expected:
    """One expected call. `rules` maps parameter → seed-1 rule (missing keys use `exact`) and the
    expected call names the keys compared. `rules=None` compares the whole argument object with
    `exact` — seed 2's definition of an exact match, where an extra argument is a difference."""

    name: str
    arguments: dict[str, Any]
    rules: Mapping[str, str] | None = None


class ArgDiff(NamedTuple):
    param: str
    expected: Any
    actual: Any
    rule: str
    code: str | None  # None when equal under the rule


class CallCheck(NamedTuple):
    """One row of evidence: an expected call and the actual call paired with it (or not)."""

    status: str  # match | partial | missing | extra | ignored | wrong_tool | invalid
    expected_index: int | None = None
    expected_tool: str | None = None
    actual_ordinal: int | None = None
    actual_tool: str | None = None
    code: str | None = None
    diffs: tuple[ArgDiff, ...] = ()
    message: str = ""


class Finding(NamedTuple):
    """One failed check: the row people query when asking "what went wrong?"."""

    rung: int
    code: str
    message: str
    tool: str | None = None
    param: str | None = None
    expected: Any = None
    actual: Any = None
    ordinal: int | None = None


# Sets a frozen value's fields in one step (its `__dict__`), not one `object.__setattr__` each.
_set = object.__setattr__


@dataclass(frozen=True, init=False)
class RungResult:
    """What one rung found for one trace. `rung` is the tier on the cost ladder (1 schema … 5
    judge), `name` identifies the rung; `scores` are named, so a new rung needs no new column.

    A frozen dataclass whose `__init__` is written out: the generated one sets each field with
    `object.__setattr__` (~0.95 µs for the eight), this one sets them as one dict (~0.45 µs), and
    every distinct trace makes several. Fields, equality, hashing and `replace` are the dataclass's."""

    rung: int
    name: str
    status: RungStatus
    scores: Mapping[str, float] = field(default_factory=dict)
    checks: tuple[CallCheck, ...] = ()
    findings: tuple[Finding, ...] = ()
    explanation: str = ""
    # A survivors-only rung the fold skipped because a lower rung failed: the trace went to triage,
    # so the rung did not run and cannot settle a verdict. Status is data; the explanation is for people.
    triaged: bool = False

    def __init__(
        self, rung: int, name: str, status: RungStatus, scores: Mapping[str, float] | None = None,
        checks: tuple[CallCheck, ...] = (), findings: tuple[Finding, ...] = (), explanation: str = "",
        triaged: bool = False,
    ) -> None:  # fmt: skip
        _set(self, "__dict__", {
            "rung": rung, "name": name, "status": status, "scores": {} if scores is None else scores,
            "checks": checks, "findings": findings, "explanation": explanation, "triaged": triaged,
        })  # fmt: skip


@dataclass(frozen=True, init=False)
class Verdict:
    """The fold of every rung's result for one trace.

    `verdict` is PASS, FAIL, SKIP, AGENT_ERROR or NOT_EVALUATED (no rung could run). `settled_at`
    is the tier of the first failing rung — or, for a PASS, of the highest rung that ran —
    and `settled_by` its name. `ignored` are the ordinals of calls a reference rung ignored
    (whitelisted extra reads). `note` is the part of `explanation` naming the rungs that could not
    run on a PASS (`not_evaluated_note`; empty when every rung ran): `explanation` ends with it.
    """

    verdict: VerdictValue
    failure_class: str | None
    settled_at: int | None
    settled_by: str | None = None
    rungs: tuple[RungResult, ...] = ()
    explanation: str = ""
    ignored: tuple[int, ...] = ()
    note: str = ""

    def __init__(
        self, verdict: VerdictValue, failure_class: str | None, settled_at: int | None,
        settled_by: str | None = None, rungs: tuple[RungResult, ...] = (), explanation: str = "",
        ignored: tuple[int, ...] = (), note: str = "",
    ) -> None:  # fmt: skip
        # as `RungResult`: the fields set as one dict
        _set(self, "__dict__", {
            "verdict": verdict, "failure_class": failure_class, "settled_at": settled_at,
            "settled_by": settled_by, "rungs": rungs, "explanation": explanation, "ignored": ignored,
            "note": note,
        })  # fmt: skip

    @property
    def reason(self) -> str:
        """The explanation without `note`: what the rungs that ran said."""
        return self.explanation[: len(self.explanation) - len(self.note)]

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for r in self.rungs for f in r.findings)
