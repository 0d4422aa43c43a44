"""Values the rungs exchange. All frozen: evaluators take data in and give results out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

RungStatus = Literal["pass", "fail", "skipped", "not_evaluated"]


@dataclass(frozen=True)
class Call:
    """One actual tool call as the judge sees it.

    `arguments` is the parsed JSON (any type; None when the raw text did not parse), `raw` the
    text the model sent. `ok` is False when the tool returned an error; `result` is the parsed
    tool result (used to follow action ids through chains).
    """

    name: str
    arguments: Any = None
    raw: str | None = None
    ok: bool = True
    result: Any = None
    ordinal: int = 0
    parsed: bool = True  # False when `raw` was not valid JSON

    @staticmethod
    def of(name: str, arguments: Any, **kwargs: Any) -> Call:
        return Call(name=name, arguments=arguments, **kwargs)


@dataclass(frozen=True)
class Expected:
    """One expected call. `rules` maps parameter → seed-1 rule; None means no case rules, so
    arguments are compared after seed-2 normalisation (trim + case-fold, canonical dates)."""

    name: str
    arguments: dict[str, Any]
    rules: dict[str, str] | None = None


@dataclass(frozen=True)
class ArgDiff:
    param: str
    expected: Any
    actual: Any
    rule: str
    code: str | None  # None when equal under the rule


@dataclass(frozen=True)
class CallCheck:
    """One row of evidence: an expected call and the actual call paired with it (or not)."""

    status: str  # match | partial | missing | extra | ignored | wrong_tool | invalid
    expected_index: int | None = None
    expected_tool: str | None = None
    actual_ordinal: int | None = None
    actual_tool: str | None = None
    code: str | None = None
    diffs: tuple[ArgDiff, ...] = ()
    message: str = ""


@dataclass(frozen=True)
class Finding:
    """One failed check: the row people query when asking "what went wrong?"."""

    rung: int
    code: str
    message: str
    tool: str | None = None
    param: str | None = None
    expected: Any = None
    actual: Any = None
    ordinal: int | None = None


@dataclass(frozen=True)
class RungResult:
    rung: int
    name: str
    status: RungStatus
    scores: dict[str, float] = field(default_factory=dict)
    checks: tuple[CallCheck, ...] = ()
    findings: tuple[Finding, ...] = ()
    explanation: str = ""
