"""Writing a recorded suite as a declarative domain directory — plain JSON, JSONL and TOML a person
reviews in a pull request — all or nothing.

Everything is written to a temporary directory beside `out`, loaded back as a domain, checked
with `domain validate`'s contract and the suite with the same strict validator the shipped suite
passes; only then is the directory renamed to `out`. A failure at any step leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from traceladder.errors import UserError
from traceladder.suite.cases.model import MULTI_TURN_SCHEMA
from traceladder.suite.cases.validator import validate_suite
from traceladder.suite.domain.declarative.build import DIMENSIONS, FIXTURE, read_directory
from traceladder.suite.domain.validate import validate_domain


class GoldenLike(Protocol):
    tool: str
    params: dict[str, Any]


@dataclass(frozen=True)
class SuiteTurn:
    """One turn of a recorded conversation: the user's message and the calls made in answer."""

    user: str
    calls: list[Any]  # GoldenLike
    order_sensitive: bool


@dataclass(frozen=True)
class SuiteCase:
    trace_id: str
    dimension: str
    instruction: str
    notes: str
    calls: list[Any]  # GoldenLike (a conversation: every turn's, in order)
    order_sensitive: bool
    turns: list[SuiteTurn] | None = None  # a conversation of several turns: a MultiTurnCaseV1 record


@dataclass(frozen=True)
class RecordedSuite:
    prefix: str
    tools: list[dict[str, Any]]
    cases: list[SuiteCase]
    responses: list[dict[str, Any]]
    id_fields: list[str]
    system_prompt: str | None = None  # written as system_prompt.txt: what a replay sends


def write_domain(suite: RecordedSuite, out: Path) -> None:
    """Write `suite` to `out` (which must not exist, or be an empty directory)."""
    if out.exists() and not (out.is_dir() and not any(out.iterdir())):
        raise UserError(f"--out {out} already exists; name a new directory (nothing is overwritten)")
    parent = out.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    except OSError as exc:
        raise UserError(f"cannot create {out}: {exc.strerror or type(exc).__name__}") from None
    try:
        _write_files(suite, staging)
        _check(staging)
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise UserError(f"cannot write {out}: {exc.strerror or type(exc).__name__}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


LABEL_WORDS = 6  # a category is named by the request's first words: enough to tell cases apart
LABEL_CHARS = 48


def case_label(instruction: str, trace_id: str, taken: set[str]) -> str:
    """A case's category name, read by a person in reports and in domain.toml: the request's first
    words, lower case, joined by `_` (`check_the_weather_in_paris_then`); `_2`, `_3`, … when an
    earlier case took it; `trace_<first 8 hex>` for a request with no word in it. Adds it to `taken`."""
    words: list[str] = []
    for word in re.findall(r"\w+", instruction.casefold()):
        if len(words) == LABEL_WORDS:
            break
        if len("_".join([*words, word])) > LABEL_CHARS:
            words += [] if words else [word[:LABEL_CHARS]]  # one long first word: its start
            break
        words.append(word)
    base = "_".join(words) or f"trace_{trace_id[:8]}"
    label, n = base, 1
    while label in taken:
        n += 1
        label = f"{base}_{n}"
    taken.add(label)
    return label


def _write_files(suite: RecordedSuite, folder: Path) -> None:
    numbers: dict[str, int] = {}
    records, categories = [], []
    taken: set[str] = set()
    for case in suite.cases:
        number = numbers[case.dimension] = numbers.get(case.dimension, 0) + 1
        category = case_label(case.instruction, case.trace_id, taken)
        records.append(_record(case, f"{suite.prefix}-{case.dimension.lower()}-{number:03d}", category))
        categories.append((category, case, number))
    _jsonl(folder / "cases.jsonl", records)
    _jsonl(folder / "responses.jsonl", suite.responses)
    (folder / "tools.json").write_text(json.dumps(suite.tools, ensure_ascii=False, indent=2) + "\n", "utf-8")
    (folder / "domain.toml").write_text(_toml(suite, categories), "utf-8")
    if suite.system_prompt:
        (folder / "system_prompt.txt").write_text(suite.system_prompt, "utf-8")


def _record(case: SuiteCase, case_id: str, category: str) -> dict[str, Any]:
    if case.turns:
        return {
            "schema": MULTI_TURN_SCHEMA,
            "id": case_id,
            "dimension": case.dimension,
            "category": category,
            "context": {"db_fixture": FIXTURE, "notes": case.notes, "source_trace": case.trace_id},
            "turns": [
                {
                    "user": t.user,
                    "golden": {
                        "calls": [{"tool": c.tool, "params": c.params} for c in t.calls],
                        "order_sensitive": t.order_sensitive,
                    },
                }
                for t in case.turns
            ],  # fmt: skip
            "negative": not case.calls,
            "skip": False,
            "skip_reason": None,
        }
    return {
        "id": case_id,
        "dimension": case.dimension,
        "category": category,
        "instruction": case.instruction,
        "context": {"db_fixture": FIXTURE, "notes": case.notes, "source_trace": case.trace_id},
        "golden": {
            "calls": [{"tool": c.tool, "params": c.params} for c in case.calls],
            "order_sensitive": case.order_sensitive,
        },  # fmt: skip
        "negative": not case.calls,
        "skip": False,
        "skip_reason": None,
    }


def _jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    # strict JSON: from_traces refused NaN and infinities already; this line makes it a rule
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in records), "utf-8"
    )


def _s(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL must be escaped too)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _list(values: list[str]) -> str:
    return "[" + ", ".join(_s(v) for v in values) + "]"


def _toml(suite: RecordedSuite, categories: list[tuple[str, SuiteCase, int]]) -> str:
    lines = [
        "# A declarative domain recorded from traces by `traceladder cases from-traces`.",
        "# Curate it like code: docs/your-own-agent.md.",
        "",
        '# "whole": a golden call matches only the arguments as sent, nothing added or left out.',
        'compare = "whole"',
        "# Tools that only read; the whitelist names those a case may call beyond its golden calls.",
        "read_only = []",
        "whitelist = []",
        "# Argument names whose values must be ones the recording knows (else PARAM_HALLUCINATED_ID).",
        f"id_fields = {_list(suite.id_fields)}",
        "",
        "# Request/confirm tools, when the agent has them:",
        "# [chains]",
        '# requests = ["cancel_order"]',
        '# confirmations = ["confirm_action"]',
        '# link = "action_id"',
        "",
        "[suite]",
        f"id_prefix = {_s(suite.prefix)}",
        "",
        "[suite.dimensions]",
        *(f"{code} = {_s(title)}" for code, title in DIMENSIONS.items()),
        "",
        "# One category per case: delete a case's line in cases.jsonl and its table here.",
    ]
    for name, case, number in categories:
        lines += [
            "",
            f"[suite.categories.{_s(name)}]",
            f"dimension = {_s(case.dimension)}",
            f"first_id = {number}",
            f"tools = {_list([c.tool for c in case.calls])}",
            f"order_sensitive = {'true' if case.order_sensitive else 'false'}",
            f"negative = {'false' if case.calls else 'true'}",
        ]
    return "\n".join(lines) + "\n"


def _check(folder: Path) -> None:
    """The written directory loads, passes `domain validate` and its suite `cases validate`."""
    domain, problems = read_directory(folder)
    if domain is not None:
        problems = validate_domain(domain)
        if not problems:
            problems = [str(v) for v in validate_suite(folder / "cases.jsonl", domain)]
    if problems:
        raise UserError(f"the recorded suite does not validate, nothing written: {problems[0]}")
