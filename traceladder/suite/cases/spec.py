"""A suite's contract, declared once by its domain: dimensions, id scheme, categories, totals.

Everything the validator, the coverage matrix, reports and the runner know about a suite comes
from its `SuiteSpec` — so a new domain brings its own suite without a constant changing anywhere.
Adding a logical scenario = its records in the JSONL plus one `CategorySpec` line in the domain's
spec (see docs/adding-cases.md); counts per dimension and the negative count are derived from the
category table and checked against the declared totals.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CategorySpec:
    dimension: str
    first_id: int  # number of the canonical variant; the other variants follow consecutively
    tools: tuple[str, ...]  # the golden tool sequence
    order_sensitive: bool
    negative: bool
    # None: no case-level list (the default whitelist applies); a tuple: exactly this list.
    allowed_extra: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SuiteTotals:
    """The counts the suite is expected to have; bumped deliberately when a scenario is added."""

    total: int
    per_dimension: Mapping[str, int]
    negative: int


@dataclass(frozen=True)
class SuiteSpec:
    """One domain's case suite.

    Case ids are `<prefix>-d<N>-<NNN>` and dimension codes `D<N>`; `dimensions` maps each code to
    its title (e.g. `D1` → "tool selection"), in report order. `fixtures` lists the fixture sets a
    case's `context.db_fixture` may name.
    """

    name: str
    id_prefix: str
    dimensions: Mapping[str, str]
    categories: Mapping[str, CategorySpec]
    totals: SuiteTotals
    variants_per_scenario: int = 1
    fixtures: tuple[str, ...] = ("standard",)
    id_pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "id_pattern", re.compile(rf"^{re.escape(self.id_prefix)}-d(\d)-(\d{{3}})$"))

    def dimension_of(self, case_id: str) -> str | None:
        """The dimension an id encodes (`fc-d2-004` → `D2`), or None for a malformed id."""
        match = self.id_pattern.match(case_id)
        return f"D{match.group(1)}" if match else None

    def expected_counts(self) -> tuple[int, dict[str, int], int]:
        """(total cases, cases per dimension, negative cases) implied by the category table."""
        per_dim: dict[str, int] = {}
        for spec in self.categories.values():
            per_dim[spec.dimension] = per_dim.get(spec.dimension, 0) + self.variants_per_scenario
        negatives = sum(self.variants_per_scenario for s in self.categories.values() if s.negative)
        return sum(per_dim.values()), per_dim, negatives
