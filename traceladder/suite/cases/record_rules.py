"""The case contract's rules over a record's parts and over a category's records, as pure
functions yielding (field, reason) or (line, case id, field, reason): `suite.cases.validator` runs them
over a suite and turns what they yield into `Violation`s with the file's name."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from traceladder.suite.cases.spec import CategorySpec, SuiteSpec

# what every variant of a scenario shares (only the id and the instruction may differ)
VARIANT_SHARED = ("dimension", "category", "context", "golden", "negative", "skip", "skip_reason")


@dataclass(frozen=True)
class Row:
    """One record of a suite file, with the line it is on."""

    line: int
    record: dict[str, Any]

    @property
    def id(self) -> str:
        value = self.record.get("id")
        return value if isinstance(value, str) else ""


def category_violations(
    name: str, spec: CategorySpec, rows: list[Row], suite: SuiteSpec
) -> Iterator[tuple[int, str, str, str]]:
    """The suite spec's rules over one category's records: how many variants, consecutive ids,
    what variants share, and each record's dimension, tool sequence, flags and golden options."""
    variants = suite.variants_per_scenario
    if len(rows) != variants:
        where = rows[0]
        yield (
            where.line,
            where.id,
            "category",
            (f"{name!r} has {len(rows)} cases; a scenario has exactly {variants} variant(s)"),
        )
    wanted = [f"{suite.id_prefix}-{spec.dimension.lower()}-{spec.first_id + i:03d}" for i in range(len(rows))]
    if [r.id for r in rows] != wanted:
        yield (
            rows[0].line,
            rows[0].id,
            "id",
            f"{name!r} must use consecutive ids {', '.join(wanted)}",
        )
    first = rows[0].record
    for row in rows[1:]:
        for f in VARIANT_SHARED:
            if row.record.get(f) != first.get(f):
                yield (
                    row.line,
                    row.id,
                    f,
                    f"differs from variant {rows[0].id} (only id and instruction may)",
                )
    for row in rows:
        r = row.record
        goldens = record_goldens(r)
        golden: dict[str, Any] = goldens[0] if len(goldens) == 1 and "turns" not in r else {}
        calls: list[Any] = [c for g in goldens for c in as_list(g.get("calls"))]
        tools = tuple(c.get("tool") for c in calls if isinstance(c, dict))
        if r.get("dimension") != spec.dimension:
            yield row.line, row.id, "dimension", f"category {name!r} belongs to {spec.dimension}"
        if tools != spec.tools:
            yield (
                row.line,
                row.id,
                "turns (golden calls of every turn)" if "turns" in r else "golden.calls",
                f"tool sequence {list(tools)} != spec {list(spec.tools)}",
            )
        if r.get("negative") != spec.negative:
            yield row.line, row.id, "negative", f"spec says {spec.negative}"
        if "turns" in r:  # each turn has its own order and whitelist; the table fixes the tools only
            continue
        if golden.get("order_sensitive") != spec.order_sensitive:
            yield row.line, row.id, "golden.order_sensitive", f"spec says {spec.order_sensitive}"
        extra = golden.get("allowed_extra")
        if (None if extra is None else tuple(extra)) != spec.allowed_extra:
            yield row.line, row.id, "golden.allowed_extra", f"spec says {spec.allowed_extra}"


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def first_message(record: dict[str, Any]) -> Any:
    """The request a case opens with: CaseV1's instruction, a multi-turn case's first message."""
    turns = record.get("turns")
    if isinstance(turns, list):
        return turns[0].get("user") if turns and isinstance(turns[0], dict) else None
    goal = record.get("user_goal")
    if isinstance(goal, dict):
        return goal.get("instructions")
    return record.get("instruction")


def record_goldens(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A record's golden objects: CaseV1's one, or one per turn (what is not an object skipped)."""
    turns = record.get("turns")
    goal = record.get("user_goal")
    if isinstance(turns, list):
        found = [t.get("golden") for t in turns if isinstance(t, dict)]
    elif isinstance(goal, dict):
        found = [goal.get("golden")]
    else:
        found = [record.get("golden")]
    return [g for g in found if isinstance(g, dict)]


def context_violations(context: Any, fixtures: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    # `source_trace`: the trace a case was made from (`cases from-traces`), kept for review
    if not isinstance(context, dict) or set(context) - {"source_trace"} != {"db_fixture", "notes"}:
        yield "context", "must contain exactly db_fixture and notes (and optionally source_trace)"
        return
    source = context.get("source_trace", "-")
    if not (isinstance(source, str) and source):
        yield "context.source_trace", "must be a non-empty trace id"
    if context["db_fixture"] not in fixtures:
        yield "context.db_fixture", f"must be one of {', '.join(repr(f) for f in fixtures)}"
    if not (isinstance(context["notes"], str) and context["notes"].strip()):
        yield "context.notes", "must be a non-empty string"


def flag_violations(r: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for f in ("negative", "skip"):
        if f in r and not isinstance(r[f], bool):
            yield f, "must be a boolean"
    skip, reason = r.get("skip"), r.get("skip_reason")
    if skip is True and not (isinstance(reason, str) and reason.strip()):
        yield "skip_reason", "skip=true requires a non-empty skip_reason"
    if skip is False and reason is not None:
        yield "skip_reason", "must be null when skip=false"
