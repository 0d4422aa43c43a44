"""CaseV1: one evaluation case — an instruction and the golden tool behaviour it must produce."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class GoldenCall:
    tool: str
    params: dict[str, Any]
    param_rules: dict[str, str]

    def rule(self, param: str) -> str:
        return self.param_rules.get(param, "exact")


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

    @staticmethod
    def from_record(record: dict[str, Any]) -> Case:
        """Build from a validated CaseV1 record (validate first: this does not check)."""
        golden = record["golden"]
        extra = golden.get("allowed_extra")
        return Case(
            id=record["id"],
            dimension=record["dimension"],
            category=record["category"],
            instruction=record["instruction"],
            notes=record["context"]["notes"],
            calls=tuple(
                GoldenCall(c["tool"], c["params"], dict(c.get("param_rules", {}))) for c in golden["calls"]
            ),
            order_sensitive=golden["order_sensitive"],
            allowed_extra=None if extra is None else tuple(extra),
            negative=record["negative"],
            skip=record["skip"],
            skip_reason=record["skip_reason"],
        )

    def effective_whitelist(self, default: tuple[str, ...]) -> tuple[str, ...]:
        """Case `allowed_extra` replaces the default entirely; an empty list is strict mode."""
        return default if self.allowed_extra is None else self.allowed_extra
