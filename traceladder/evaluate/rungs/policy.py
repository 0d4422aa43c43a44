"""Invariant policies as plain data: what the open-path rung (`invariants`) checks on a live trace.

`Policy` is the resolved set of checks for one trace; `PolicySet` is a whole policy file — a
`defaults` section, `service` sections and `agent` sections — and picks the `Policy` for a trace.
No file I/O here (`traceladder.evaluate.policy_file` reads TOML); everything is picklable, so a policy
travels to worker processes with the trace.

Tool names in every rule are `fnmatch` globs matched case-sensitively (`fnmatchcase`): `*`, `?`,
`[seq]`. They are compiled once, when the `Policy` is built, and what a tool name matches is then
memoised per policy, so judging a call costs one dictionary lookup.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from fnmatch import translate
from typing import Any, NamedTuple

_MEMO_LIMIT = 10_000  # distinct tool names remembered per policy (garbage traces can invent many)
_NEVER = re.compile(r"(?!)")  # matches no name: an empty allow list, a rule confirmed by nothing


class Confirmation(NamedTuple):
    """A call to a tool matching `tool` must be followed, later in the trace, by a call to a tool
    matching one of `by` (e.g. `request_*` by `confirm_action` or `abort_action`)."""

    tool: str
    by: tuple[str, ...]


class ParamRule(NamedTuple):
    """Parameter `param` of a tool matching `tool` must match `pattern` in full (`re.fullmatch`)."""

    tool: str
    param: str
    pattern: re.Pattern[str]


class ToolRules(NamedTuple):
    """What a policy says about one tool name (computed once per name)."""

    forbidden: str | None  # the forbidden_tools glob it matches
    allowed: bool  # True when allowed_tools is unset or a glob matches
    requests: tuple[int, ...]  # indices of the confirm rules it must be confirmed under
    confirms: tuple[int, ...]  # indices of the confirm rules it confirms
    params: tuple[ParamRule, ...]


def glob_regex(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    """One compiled regex matching any of `globs` (None for none)."""
    return re.compile("|".join(translate(g) for g in globs)) if globs else None


@dataclass(frozen=True)
class Policy:
    """The invariant checks for one trace. A check is off when its field is None (limits,
    `allowed_tools`), empty (`forbidden_tools`, `confirm`, `parameters`) or False."""

    allowed_tools: tuple[str, ...] | None = None
    forbidden_tools: tuple[str, ...] = ()
    max_turns: int | None = None
    max_tool_calls: int | None = None
    forbid_duplicate_calls: bool = False
    max_tool_errors: int | None = None
    max_latency_ms: float | None = None
    confirm: tuple[Confirmation, ...] = ()
    parameters: tuple[ParamRule, ...] = ()
    source: str = ""  # which sections it came from, e.g. 'defaults + service "checkout"'
    _allowed: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _forbidden: tuple[tuple[str, re.Pattern[str]], ...] = field(init=False, repr=False, compare=False)
    _confirm: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = field(
        init=False, repr=False, compare=False
    )
    _params: tuple[tuple[re.Pattern[str], ParamRule], ...] = field(init=False, repr=False, compare=False)
    _memo: dict[str, ToolRules] = field(init=False, repr=False, compare=False)
    _checks: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        allowed = None if self.allowed_tools is None else glob_regex(self.allowed_tools)
        # An empty allow list allows nothing: a regex that never matches.
        if self.allowed_tools is not None and allowed is None:
            allowed = _NEVER
        compiled: dict[str, Any] = {
            "_allowed": allowed,
            "_forbidden": tuple((g, re.compile(translate(g))) for g in self.forbidden_tools),
            "_confirm": tuple(
                (re.compile(translate(c.tool)), glob_regex(c.by) or _NEVER) for c in self.confirm
            ),  # fmt: skip
            "_params": tuple((re.compile(translate(p.tool)), p) for p in self.parameters),
            "_memo": {},
            "_checks": self._enabled(),
        }
        for name, value in compiled.items():
            object.__setattr__(self, name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the public fields; the receiving process compiles its own globs."""
        return (_policy, (self.settings(), self.source))

    def settings(self) -> dict[str, Any]:
        """The public check fields, by name (what `PolicySet` merges)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init and f.name != "source"}

    @property
    def checks(self) -> tuple[str, ...]:
        """One label per enabled check; a confirm or parameter rule is one check each."""
        return self._checks

    def _enabled(self) -> tuple[str, ...]:
        names = [k for k in ("max_turns", "max_tool_calls", "max_tool_errors", "max_latency_ms")
                 if getattr(self, k) is not None]  # fmt: skip
        if self.allowed_tools is not None:
            names.append("allowed_tools")
        if self.forbidden_tools:
            names.append("forbidden_tools")
        if self.forbid_duplicate_calls:
            names.append("forbid_duplicate_calls")
        names.extend(f"confirm {c.tool}" for c in self.confirm)
        names.extend(f"parameters {p.tool}.{p.param}" for p in self.parameters)
        return tuple(names)

    def rules_for(self, tool: str) -> ToolRules:
        """What this policy says about `tool`, memoised."""
        found = self._memo.get(tool)
        if found is None:
            forbidden = next((g for g, rx in self._forbidden if rx.match(tool)), None)
            found = ToolRules(
                forbidden,
                self._allowed is None or self._allowed.match(tool) is not None,
                tuple(i for i, (rx, _) in enumerate(self._confirm) if rx.match(tool)),
                tuple(i for i, (_, rx) in enumerate(self._confirm) if rx.match(tool)),
                tuple(rule for rx, rule in self._params if rx.match(tool)),
            )
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[tool] = found
        return found


def _policy(settings: dict[str, Any], source: str) -> Policy:
    return Policy(**settings, source=source)


@dataclass(frozen=True)
class PolicySet:
    """A whole policy file. Each section maps check names (the fields of `Policy`) to values.

    Resolution for a trace, key by key: `defaults`, overridden by the section for its service
    (resource `service.name`), overridden by the section for its agent (`gen_ai.agent.name`). A key
    a section sets replaces the inherited value whole — `confirm` and `parameters` included.
    """

    defaults: Mapping[str, Any] | None = None
    services: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    agents: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    origin: str = ""  # the file it was read from
    conversation: Mapping[str, Any] | None = None  # [conversation]: checked across a conversation's turns
    _cache: dict[tuple[str | None, str | None], Policy | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __reduce__(self) -> tuple[Any, ...]:
        return (PolicySet, (self.defaults, self.services, self.agents, self.origin, self.conversation))

    def for_conversation(self) -> Policy | None:
        """The checks of the `[conversation]` table, run over a conversation's calls taken
        together (`evaluate.conversation_judge`); None when the file has none."""
        if not self.conversation:
            return None
        return Policy(**self.conversation, source="conversation")

    def sections(self) -> tuple[tuple[str, str], ...]:
        """The ("service" | "agent", name) pairs the file names, sorted."""
        return tuple(sorted([("service", s) for s in self.services] + [("agent", a) for a in self.agents]))

    def select(self, service: str | None, agent: str | None) -> Policy | None:
        """The policy for a trace of `service` run by `agent`; None when no section applies."""
        key = (
            service if service is not None and service in self.services else None,
            agent if agent is not None and agent in self.agents else None,
        )
        if key in self._cache:
            return self._cache[key]
        layers: list[tuple[str, Mapping[str, Any]]] = []
        if self.defaults is not None:
            layers.append(("defaults", self.defaults))
        if key[0] is not None:
            layers.append((f'service "{key[0]}"', self.services[key[0]]))
        if key[1] is not None:
            layers.append((f'agent "{key[1]}"', self.agents[key[1]]))
        merged: dict[str, Any] = {}
        for _, settings in layers:
            merged.update(settings)
        policy = Policy(**merged, source=" + ".join(name for name, _ in layers)) if layers else None
        self._cache[key] = policy
        return policy
