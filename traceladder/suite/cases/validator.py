"""The CaseV1 suite validator: every rule of the case contract, every violation reported.

Used by `traceladder cases validate` and by the runner before any model request. Rules are small
functions over one record (or the whole suite); each yields `Violation`s rather than raising, so a
single run lists everything to fix with file:line, case id, field and reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.files import LIMITS, jsonl_lines, read_input
from traceladder.suite.cases.model import (
    CASE_FIELDS,
    GOAL_FIELDS,
    MAX_GOAL_TURNS,
    MULTI_TURN_FIELDS,
    MULTI_TURN_SCHEMA,
    PARAM_RULES,
    TURN_FIELDS,
    Case,
)
from traceladder.suite.cases.record_rules import (
    Row,
    category_violations,
    context_violations,
    first_message,
    flag_violations,
)
from traceladder.suite.cases.spec import SuiteSpec
from traceladder.suite.domain.base import Domain

FORMAT_KEY = "schema"  # the key that names a record's format; absent for CaseV1


@dataclass(frozen=True)
class Violation:
    file: str
    line: int  # 0 = the file or the suite as a whole
    case_id: str
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.case_id or '-'}: {self.field}: {self.reason}"


class SuiteValidator:
    """Validates suites against one domain and one category table (validators compiled once)."""

    def __init__(self, domain: Domain, spec: SuiteSpec | None = None) -> None:
        if spec is None and domain.suite is None:
            raise UserError(f"the {domain.name} domain has no case suite; pass one with --cases and a spec")
        self.domain = domain
        self.spec: SuiteSpec = spec or domain.suite  # type: ignore[assignment]
        self._validators = domain.validators

    def validate_file(self, path: Path) -> list[Violation]:
        return self.validate_bytes(read_input(path, "case file", LIMITS["cases.jsonl"]), str(path))

    def validate_bytes(self, data: bytes, name: str) -> list[Violation]:
        out: list[Violation] = []
        rows = self._parse(data, name, out)
        for row in rows:
            out += [Violation(name, row.line, row.id, f, r) for f, r in self._record(row.record)]
        out += [Violation(name, ln, cid, f, r) for ln, cid, f, r in self._suite(rows)]
        return out

    # -- file format -------------------------------------------------------------------------

    def _parse(self, data: bytes, name: str, out: list[Violation]) -> list[Row]:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.append(Violation(name, 0, "", "file", f"not UTF-8: {exc}"))
            return []
        if not text:
            out.append(Violation(name, 0, "", "file", "the file is empty"))
            return []
        if not text.endswith("\n"):
            out.append(Violation(name, 0, "", "file", "the file must end with a newline"))
        if "\r" in text:
            out.append(Violation(name, 0, "", "file", "use LF line endings, not CRLF"))
        rows = []
        for number, line in enumerate(jsonl_lines(text), 1):
            if not line.strip():
                out.append(Violation(name, number, "", "file", "blank line"))
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                out.append(Violation(name, number, "", "file", f"not valid JSON: {exc}"))
                continue
            except RecursionError:
                out.append(Violation(name, number, "", "file", "JSON nested too deeply"))
                continue
            if not isinstance(record, dict):
                out.append(Violation(name, number, "", "file", "each line must be one JSON object"))
                continue
            rows.append(Row(number, record))
        return rows

    # -- one record --------------------------------------------------------------------------

    def _record(self, r: dict[str, Any]) -> Iterator[tuple[str, str]]:
        multi = FORMAT_KEY in r
        if multi and r[FORMAT_KEY] != MULTI_TURN_SCHEMA:
            yield (
                "schema",
                f"{r[FORMAT_KEY]!r} is not a case format (omit it for CaseV1, or {MULTI_TURN_SCHEMA!r})",
            )
            return
        fields = MULTI_TURN_FIELDS if multi else CASE_FIELDS
        if multi and "user_goal" in r:
            if "turns" in r:
                yield "user_goal", "give either turns (scripted messages) or user_goal, not both"
            else:  # a goal case: the user goal stands in for the scripted turns
                fields = tuple("user_goal" if f == "turns" else f for f in fields)
        missing = [f for f in fields if f not in r]
        unknown = sorted(set(r) - set(fields))
        for f in missing:
            yield f, "required field is missing"
        for f in unknown:
            yield (
                f,
                (
                    f"unknown field ({MULTI_TURN_SCHEMA} has exactly {len(fields)} fields)"
                    if multi
                    else "unknown field (CaseV1 has exactly nine fields)"
                ),
            )
        cid, dim = r.get("id"), r.get("dimension")
        encoded = self.spec.dimension_of(cid) if isinstance(cid, str) else None
        if "id" in r and encoded is None:
            yield "id", f"{cid!r} does not match {self.spec.id_prefix}-dN-NNN"
        if "dimension" in r and dim not in self.spec.dimensions:
            yield "dimension", f"{dim!r} is not one of {', '.join(self.spec.dimensions)}"
        elif encoded is not None and dim != encoded:
            yield "dimension", f"{dim!r} does not match the dimension in id {cid!r}"
        for f in ("category", "instruction"):
            if f in r and not (isinstance(r[f], str) and r[f].strip()):
                yield f, "must be a non-empty string"
        if "context" in r:
            yield from context_violations(r["context"], self.spec.fixtures)
        yield from flag_violations(r)
        if "golden" in r:
            yield from self._golden(r["golden"], r.get("negative"))
        if "turns" in r:
            yield from self._turns(r["turns"], r.get("negative"))
        if multi and "user_goal" in r:
            yield from self._goal(r["user_goal"], r.get("negative"))

    def _goal(self, goal: Any, negative: Any) -> Iterator[tuple[str, str]]:
        """A goal case's `user_goal`: the user's instructions, a turn budget and the golden calls
        the whole conversation must make."""
        if not isinstance(goal, dict):
            yield "user_goal", "must be an object with instructions, max_turns and golden"
            return
        for key in sorted(set(goal) - set(GOAL_FIELDS)):
            yield f"user_goal.{key}", f"unknown field (only {', '.join(GOAL_FIELDS)})"
        for key in GOAL_FIELDS:
            if key not in goal:
                yield f"user_goal.{key}", "required field is missing"
        text = goal.get("instructions")
        if "instructions" in goal and not (isinstance(text, str) and text.strip()):
            yield "user_goal.instructions", "must be a non-empty string (what the simulated user wants)"
        turns = goal.get("max_turns")
        if "max_turns" in goal and not (
            isinstance(turns, int) and not isinstance(turns, bool) and 1 <= turns <= MAX_GOAL_TURNS
        ):
            yield "user_goal.max_turns", f"must be an integer from 1 to {MAX_GOAL_TURNS}"
        if "golden" in goal:
            for f, reason in self._golden(goal["golden"], negative):
                yield f"user_goal.{f}", reason

    def _turns(self, turns: Any, negative: Any) -> Iterator[tuple[str, str]]:
        """A multi-turn case's turns: at least one; each a non-empty user message and its golden
        calls, every call's tool one its turn offers (`tools`, default all of the domain's)."""
        if not isinstance(turns, list) or not turns:
            yield "turns", "must be a non-empty list of turns (one per user message)"
            return
        for index, turn in enumerate(turns):
            where = f"turns[{index}]"
            if not isinstance(turn, dict):
                yield where, "must be an object with user and golden"
                continue
            for key in sorted(set(turn) - set(TURN_FIELDS)):
                yield f"{where}.{key}", "unknown field (only user, golden, tools)"
            for key in ("user", "golden"):
                if key not in turn:
                    yield f"{where}.{key}", "required field is missing"
            user = turn.get("user")
            if "user" in turn and not (isinstance(user, str) and user.strip()):
                yield f"{where}.user", "must be a non-empty string (the user's message)"
            offered = turn.get("tools")
            if offered is not None:
                if not isinstance(offered, list) or not all(isinstance(t, str) for t in offered):
                    yield f"{where}.tools", "must be a list of tool names"
                    offered = None
                else:
                    for tool in offered:
                        if tool not in self._validators:
                            yield f"{where}.tools", f"{tool!r} is not a tool of the {self.domain.name} domain"
            if "golden" not in turn:
                continue
            for f, reason in self._golden(turn["golden"], negative):
                yield f"{where}.{f}", reason
            calls = turn["golden"].get("calls") if isinstance(turn["golden"], dict) else None
            for c, call in enumerate(calls if isinstance(calls, list) else []):
                tool = call.get("tool") if isinstance(call, dict) else None
                if offered is not None and isinstance(tool, str) and tool not in offered:
                    yield (
                        f"{where}.golden.calls[{c}].tool",
                        f"{tool!r} is not offered in turn {index + 1} "
                        f"(its tools: {', '.join(offered) or 'none'})",
                    )

    def _golden(self, golden: Any, negative: Any) -> Iterator[tuple[str, str]]:
        if not isinstance(golden, dict):
            yield "golden", "must be an object"
            return
        for key in sorted(set(golden) - {"calls", "order_sensitive", "allowed_extra"}):
            yield f"golden.{key}", "unknown field"
        calls = golden.get("calls")
        if not isinstance(calls, list):
            yield "golden.calls", "must be a list"
            calls = []
        if not isinstance(golden.get("order_sensitive"), bool):
            yield "golden.order_sensitive", "must be a boolean"
        if "allowed_extra" in golden:
            extra = golden["allowed_extra"]
            if not isinstance(extra, list) or not all(isinstance(t, str) for t in extra):
                yield "golden.allowed_extra", "must be a list of tool names"
            else:
                if len(set(extra)) != len(extra):
                    yield "golden.allowed_extra", "tool names must be unique"
                for tool in extra:
                    if tool not in self.domain.read_only_tools:
                        yield "golden.allowed_extra", f"{tool!r} is not a read-only tool"
        if negative is True and calls:
            yield "golden.calls", "a negative case expects no golden calls"
        for index, call in enumerate(calls):
            yield from self._call(call, f"golden.calls[{index}]")

    def _call(self, call: Any, where: str) -> Iterator[tuple[str, str]]:
        if not isinstance(call, dict):
            yield where, "must be an object"
            return
        for key in sorted(set(call) - {"tool", "params", "param_rules"}):
            yield f"{where}.{key}", "unknown field (only tool, params, param_rules)"
        tool, params = call.get("tool"), call.get("params")
        if tool not in self._validators:
            yield f"{where}.tool", f"{tool!r} is not a tool of the {self.domain.name} domain"
        if not isinstance(params, dict):
            yield f"{where}.params", "must be an object"
            params = {}
        elif tool in self._validators:
            from traceladder.evaluate.rungs.untrusted_schema import Uncheckable, schema_errors

            try:
                errors = schema_errors(self._validators[tool], params)
            except Uncheckable as exc:
                yield f"{where}.params", f"schema: cannot be checked: {exc}"
                errors = []
            for err in errors:
                path = ".".join(str(p) for p in err.absolute_path)
                yield f"{where}.params{'.' + path if path else ''}", f"schema: {err.message}"
        rules = call.get("param_rules", {})
        if not isinstance(rules, dict):
            yield f"{where}.param_rules", "must be an object"
            rules = {}
        for key, rule in rules.items():
            if key not in params:
                yield f"{where}.param_rules.{key}", "names a parameter absent from params"
            if rule not in PARAM_RULES:
                yield (
                    f"{where}.param_rules.{key}",
                    f"{rule!r} is not one of {', '.join(PARAM_RULES)}",
                )
        yield from self._ids(params, f"{where}.params")

    def _ids(self, value: Any, where: str) -> Iterator[tuple[str, str]]:
        """Fixture-backed IDs must exist, at any depth (item lists carry item_id too)."""
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from self._ids(item, f"{where}[{i}]")
        elif isinstance(value, dict):
            for key, child in value.items():
                valid = self.domain.id_fields.get(key)
                link = self.domain.chains.link
                if valid is not None and child not in valid:
                    yield f"{where}.{key}", f"{child!r} is not in the fixtures"
                elif key == link and not (isinstance(child, str) and child):
                    yield f"{where}.{key}", f"{link} must be a non-empty string"
                else:
                    yield from self._ids(child, f"{where}.{key}")

    # -- the suite ---------------------------------------------------------------------------

    def _suite(self, rows: list[Row]) -> Iterator[tuple[int, str, str, str]]:
        seen_ids: dict[str, int] = {}
        seen_text: dict[str, str] = {}
        for row in rows:
            if row.id in seen_ids:
                yield row.line, row.id, "id", f"duplicate of line {seen_ids[row.id]}"
            seen_ids.setdefault(row.id, row.line)
            text = first_message(row.record)
            if isinstance(text, str):
                key = text.strip().casefold()
                if key in seen_text:
                    yield (
                        row.line,
                        row.id,
                        "instruction",
                        f"duplicates {seen_text[key]} (trim+casefold)",
                    )
                seen_text.setdefault(key, row.id)
        yield from self._counts(rows)
        yield from self._categories(rows)

    def _counts(self, rows: list[Row]) -> Iterator[tuple[int, str, str, str]]:
        totals = self.spec.totals
        derived = self.spec.expected_counts()
        declared = (totals.total, dict(totals.per_dimension), totals.negative)
        if derived != declared:
            yield 0, "", "spec", f"category table implies {derived}, the declared totals say {declared}"
        per_dim: dict[str, int] = {}
        for row in rows:
            dim = row.record.get("dimension")
            if isinstance(dim, str):
                per_dim[dim] = per_dim.get(dim, 0) + 1
        if len(rows) != totals.total:
            yield 0, "", "suite", f"expected {totals.total} cases, found {len(rows)}"
        for dim, want in sorted(totals.per_dimension.items()):
            if per_dim.get(dim, 0) != want:
                yield 0, "", "suite", f"expected {want} {dim} cases, found {per_dim.get(dim, 0)}"
        negatives = sum(1 for row in rows if row.record.get("negative") is True)
        if negatives != totals.negative:
            yield (
                0,
                "",
                "suite",
                f"expected {totals.negative} negative cases, found {negatives}",
            )

    def _categories(self, rows: list[Row]) -> Iterator[tuple[int, str, str, str]]:
        by_category: dict[str, list[Row]] = {}
        for row in rows:
            by_category.setdefault(str(row.record.get("category")), []).append(row)
        categories = self.spec.categories
        for name, members in by_category.items():
            spec = categories.get(name)
            if spec is None:
                for row in members:
                    yield row.line, row.id, "category", f"{name!r} is not a category of the suite spec"
                continue
            yield from category_violations(name, spec, members, self.spec)
        for name in sorted(set(categories) - set(by_category)):
            yield 0, "", "category", f"{name!r} is declared in the suite spec but has no cases"


def validate_suite(path: Path, domain: Domain) -> list[Violation]:
    return SuiteValidator(domain).validate_file(path)


@dataclass(frozen=True)
class ValidSuite:
    """A suite read once and validated: the bytes that were validated are the bytes a run hashes
    into its identity and the cases every later step of the run uses (`traceladder run` reads and
    validates its suite once, not once per step)."""

    path: Path
    data: bytes
    cases: tuple[Case, ...]


def read_valid_suite(path: Path, domain: Domain) -> ValidSuite:
    """Read `path` once and validate it; a `UserError` summarising every violation."""
    if not path.exists():
        raise UserError(f"case file {path} does not exist; pass --cases FILE or omit it")
    data = read_input(path, "case file", LIMITS["cases.jsonl"])
    problems = SuiteValidator(domain).validate_bytes(data, str(path))
    if problems:
        shown = "; ".join(str(p) for p in problems[:3])
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UserError(f"invalid case suite: {shown}{more}; run `traceladder cases validate {path}`")
    lines = jsonl_lines(data.decode("utf-8"))
    return ValidSuite(path, data, tuple(Case.from_record(json.loads(line)) for line in lines))


def require_valid_suite(path: Path, domain: Domain) -> tuple[Case, ...]:
    """The suite's cases, or a `UserError` summarising every violation."""
    return read_valid_suite(path, domain).cases
