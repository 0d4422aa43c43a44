"""CaseV1: one evaluation case — an instruction and the golden tool behaviour it must produce —
and MultiTurnCaseV1: a conversation, the user's messages in order, each with its own golden
calls (`turns`). A record names the second format with `"schema": "MultiTurnCaseV1"`; a record
without `schema` is CaseV1, so every CaseV1 file (the shipped suite and its hashes) is unchanged."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

PARAM_RULES: tuple[str, ...] = ("exact", "normalized_str", "normalized_date", "contains", "any")
CASE_FIELDS: tuple[str, ...] = (
    "id",
    "dimension",
    "category",
    "instruction",
    "context",
    "golden",
    "negative",
    "skip",
    "skip_reason",
)

MULTI_TURN_SCHEMA = "MultiTurnCaseV1"
# Exactly these fields: CaseV1's, with `turns` in place of `instruction` and `golden`.
MULTI_TURN_FIELDS: tuple[str, ...] = (
    "schema",
    "id",
    "dimension",
    "category",
    "context",
    "turns",
    "negative",
    "skip",
    "skip_reason",
)
TURN_FIELDS: tuple[str, ...] = ("user", "golden", "tools")  # `tools` is optional
# A MultiTurnCaseV1 gives either `turns` (scripted messages) or `user_goal` (a simulated user
# plays the user: docs/conversations.md, "A simulated user"), exactly one of the two.
GOAL_FIELDS: tuple[str, ...] = ("instructions", "max_turns", "golden")
MAX_GOAL_TURNS = 50


@dataclass(frozen=True)
class GoldenCall:
    tool: str
    params: dict[str, Any]
    param_rules: dict[str, str]

    def rule(self, param: str) -> str:
        return self.param_rules.get(param, "exact")


@dataclass(frozen=True)
class Turn:
    """One user message of a multi-turn case and what the agent must do in answer to it: its
    golden calls, judged like a CaseV1 case's (`order_sensitive`, `allowed_extra`: None = the
    domain's whitelist). `tools`: the tools offered in this turn (None = all of the domain's)."""

    user: str
    calls: tuple[GoldenCall, ...]
    order_sensitive: bool
    allowed_extra: tuple[str, ...] | None
    tools: tuple[str, ...] | None


@dataclass(frozen=True)
class UserGoal:
    """What a simulated user wants and what the agent must have done by the end: `instructions`
    (what the user is told; `sim:user` opens with them), `max_turns` (the most turns the
    conversation may take) and the golden calls of the whole conversation, in `Case.calls`."""

    instructions: str
    max_turns: int


def _calls(golden: dict[str, Any]) -> tuple[GoldenCall, ...]:
    return tuple(GoldenCall(c["tool"], c["params"], dict(c.get("param_rules", {}))) for c in golden["calls"])


def _extra(golden: dict[str, Any]) -> tuple[str, ...] | None:
    extra = golden.get("allowed_extra")
    return None if extra is None else tuple(extra)


@dataclass(frozen=True)
class Case:
    id: str
    dimension: str
    category: str
    instruction: str
    notes: str
    calls: tuple[GoldenCall, ...]
    order_sensitive: bool
    # None = the domain's default whitelist applies; a tuple (even empty) replaces it.
    allowed_extra: tuple[str, ...] | None
    negative: bool
    skip: bool
    skip_reason: str | None
    # A multi-turn case's turns, in order (empty for CaseV1). Then `instruction` is the first
    # turn's message and `calls` every turn's golden calls in order — what a case-level view
    # (coverage, the category table) reads; each turn is judged against its own `Turn`.
    turns: tuple[Turn, ...] = ()
    # A goal case's user goal (None otherwise). Then `turns` is empty, `instruction` is the goal's
    # instructions and `calls` the calls the whole conversation must make.
    goal: UserGoal | None = None

    @property
    def multi_turn(self) -> bool:
        """Scripted turns, each judged against its own golden calls."""
        return bool(self.turns)

    @staticmethod
    def from_record(record: dict[str, Any]) -> Case:
        """Build from a validated CaseV1 or MultiTurnCaseV1 record (validate first: this does
        not check)."""
        if record.get("schema") == MULTI_TURN_SCHEMA and "user_goal" in record:
            return Case._from_goal(record)
        if record.get("schema") == MULTI_TURN_SCHEMA:
            return Case._from_turns(record)
        return Case._with_golden(record, record["instruction"], record["golden"])

    @staticmethod
    def _with_golden(record: dict[str, Any], instruction: str, golden: dict[str, Any], **more: Any) -> Case:
        """A case judged against one golden call list (a CaseV1, or a goal's calls for the whole
        conversation), its other fields from `record`."""
        return Case(
            id=record["id"],
            dimension=record["dimension"],
            category=record["category"],
            instruction=instruction,
            notes=record["context"]["notes"],
            calls=_calls(golden),
            order_sensitive=golden["order_sensitive"],
            allowed_extra=_extra(golden),
            negative=record["negative"],
            skip=record["skip"],
            skip_reason=record["skip_reason"],
            **more,
        )

    @staticmethod
    def _from_turns(record: dict[str, Any]) -> Case:
        turns = tuple(
            Turn(
                user=t["user"],
                calls=_calls(t["golden"]),
                order_sensitive=t["golden"]["order_sensitive"],
                allowed_extra=_extra(t["golden"]),
                tools=None if t.get("tools") is None else tuple(t["tools"]),
            )
            for t in record["turns"]
        )
        return Case(
            id=record["id"],
            dimension=record["dimension"],
            category=record["category"],
            instruction=turns[0].user,
            notes=record["context"]["notes"],
            calls=tuple(c for t in turns for c in t.calls),
            order_sensitive=any(t.order_sensitive for t in turns),
            allowed_extra=None,
            negative=record["negative"],
            skip=record["skip"],
            skip_reason=record["skip_reason"],
            turns=turns,
        )

    @staticmethod
    def _from_goal(record: dict[str, Any]) -> Case:
        goal = record["user_goal"]
        return Case._with_golden(
            record,
            goal["instructions"],
            goal["golden"],
            goal=UserGoal(goal["instructions"], goal["max_turns"]),
        )

    def turn_case(self, index: int) -> Case:
        """Turn `index` of a multi-turn case as the single-turn case it is judged as: its own
        message, golden calls, ordering and whitelist (the case's id, dimension and flags)."""
        turn = self.turns[index]
        return replace(
            self, instruction=turn.user, calls=turn.calls, order_sensitive=turn.order_sensitive,
            allowed_extra=turn.allowed_extra, turns=(),
        )  # fmt: skip

    def through_turn(self, index: int) -> Case:
        """The calls of turns 0..`index` as one case: the end state the sandbox must hold after
        turn `index` is what replaying them leaves (the state rung's golden path of that turn)."""
        calls = tuple(c for t in self.turns[: index + 1] for c in t.calls)
        return replace(self, calls=calls, turns=())

    def effective_whitelist(self, default: tuple[str, ...]) -> tuple[str, ...]:
        """Case `allowed_extra` replaces the default entirely; an empty list is strict mode."""
        return default if self.allowed_extra is None else self.allowed_extra


def turn_key(case_id: str, turn: int | None) -> str:
    """The key of a case's golden end state: the case id, or for one turn of a multi-turn case
    `id#turnN` (N its 0-based index, as `case_turns.turn`), the state after that turn."""
    return case_id if turn is None else f"{case_id}#turn{turn}"
