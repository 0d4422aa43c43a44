"""Reading a declarative domain directory into a `Domain`.

    tools.json         OpenAI function-tool definitions (a JSON list), the agent's real ones
    system_prompt.txt  the agent's system prompt (optional)
    domain.toml        compare, read_only, whitelist, id_fields; optional [chains] and [suite]
    responses.jsonl    recorded results, one a line: {"tool", "arguments" | "arguments_raw",
                       "result", "ok"?, "trace"?} (optional: without it every call is new)
    cases.jsonl        the domain's case suite (optional; `--cases FILE` names another)

`read_directory` returns the domain or every problem that keeps it from loading (one line each,
file and line named); `load_directory` raises the first ones as a `UserError`. Problems that do
not stop loading — a recorded call the schema rejects, a whitelisted tool that is not read-only —
are `domain validate`'s (`Domain.extra_checks` and the generic contract).
"""

from __future__ import annotations

import contextlib
import json
import os
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.evaluate.rungs.untrusted_schema import Uncheckable, schema_errors, schema_problem
from traceladder.files import LIMITS, jsonl_lines, outside, read_input
from traceladder.suite.cases.spec import CategorySpec, SuiteSpec, SuiteTotals
from traceladder.suite.domain.base import ChainSpec, Domain
from traceladder.suite.domain.declarative.replay import Recorded, ReplaySandbox, replay_key

PREFIX = "dir:"
FIXTURE = "recorded"  # the one `context.db_fixture` of a declarative suite: the recorded results
DIMENSIONS = {"D1": "when to call", "D2": "selection/fill", "D3": "chain"}
_TOP_KEYS = {"name", "compare", "read_only", "whitelist", "id_fields", "chains", "suite"}
COMPARE = ("whole", "named")  # golden arguments: the whole object as sent, or only the keys named
_CHAIN_KEYS = {"requests", "confirmations", "aborts", "link"}
_SUITE_KEYS = {"name", "id_prefix", "dimensions", "categories"}
_CATEGORY_KEYS = {"dimension", "first_id", "tools", "order_sensitive", "negative", "allowed_extra"}
_RESPONSE_KEYS = {"tool", "arguments", "arguments_raw", "result", "ok", "trace"}


def directory_spec(name: str, installed: frozenset[str] = frozenset()) -> Path | None:
    """The directory a `--domain` value names: `dir:PATH`, anything with a path separator, or an
    existing directory that is not an installed domain's name; None for a domain name."""
    if name.startswith(PREFIX):
        return Path(name[len(PREFIX) :])
    if name in installed:
        return None
    if "/" in name or os.sep in name or Path(name).is_dir():
        return Path(name)
    return None


def load_directory(path: Path) -> Domain:
    """The domain a directory declares, or a `UserError` naming what is wrong."""
    domain, problems = read_directory(path)
    if domain is None:
        shown = "; ".join(problems[:3])
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UserError(
            f"domain directory {path}: {shown}{more}; run `traceladder domain validate --domain {path}`"
        )
    return domain


@dataclass(frozen=True)
class _Files:
    tools: list[dict[str, Any]]
    config: dict[str, Any]
    prompt: str
    responses: list[tuple[int, dict[str, Any]]]
    raw: dict[str, bytes]


def read_directory(path: Path) -> tuple[Domain | None, list[str]]:
    """(the domain, []) or (None, every problem that keeps it from loading)."""
    if not path.is_dir():
        return None, [f"{path} is not a directory"]
    problems: list[str] = []
    files = _read_files(path, problems)
    escape = outside(path, "cases.jsonl")  # read later, by the suite's reader: checked here
    if escape:
        problems.append(escape)
    if files is None or problems:
        return None, problems
    try:
        return _build(path, files), []
    except _Invalid as exc:
        return None, [str(exc)]


class _Invalid(ValueError):
    pass


def _read(path: Path, name: str, problems: list[str], *, required: bool) -> bytes | None:
    """A file of the folder, read like an archive member: no link out of the folder, nothing but a
    regular file, at most its limit (`files.LIMITS`)."""
    file = path / name
    if not file.exists() and not file.is_symlink():
        if required:
            problems.append(f"{name} is missing")
        return None
    escape = outside(path, name)
    if escape:
        problems.append(escape)
        return None
    try:
        return read_input(file, name, LIMITS[name])
    except UserError as exc:
        problems.append(str(exc).replace(f"{name} {file}", name, 1))
        return None


def _text(data: bytes, name: str, problems: list[str]) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        problems.append(f"{name} is not UTF-8 text")
        return None


def _read_files(path: Path, problems: list[str]) -> _Files | None:
    raw: dict[str, bytes] = {}
    for name, required in (
        ("tools.json", True),
        ("domain.toml", True),
        ("system_prompt.txt", False),
        ("responses.jsonl", False),
    ):
        data = _read(path, name, problems, required=required)
        if data is not None:
            raw[name] = data
    tools = _tools(raw.get("tools.json"), problems)
    config = _config(raw.get("domain.toml"), problems)
    prompt = (
        _text(raw["system_prompt.txt"], "system_prompt.txt", problems) if "system_prompt.txt" in raw else ""
    )
    responses = list(_responses(raw.get("responses.jsonl", b""), problems))
    if tools is None or config is None or prompt is None:
        return None
    return _Files(tools, config, prompt, responses, raw)


def _tools(data: bytes | None, problems: list[str]) -> list[dict[str, Any]] | None:
    if data is None:
        return None
    text = _text(data, "tools.json", problems)
    if text is None:
        return None
    try:
        tools = json.loads(text)
    except (ValueError, RecursionError) as exc:
        problems.append(f"tools.json is not JSON: {exc}")
        return None
    if not isinstance(tools, list) or not tools:
        problems.append("tools.json must be a non-empty JSON list of OpenAI function tools")
        return None
    ok = True
    for index, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        params = fn.get("parameters") if isinstance(fn, dict) else None
        if not isinstance(name, str) or not isinstance(params, dict):
            problems.append(
                f"tools.json[{index}]: not an OpenAI function tool "
                '({"type": "function", "function": {"name", "parameters"}})'
            )
            ok = False
            continue
        problem = schema_problem(params)  # a folder's schemas are data: no $ref fetched, RE2 patterns
        if problem:
            problems.append(f"tools.json[{index}] {name}: parameters schema {problem}")
            ok = False
    return tools if ok else None


def _config(data: bytes | None, problems: list[str]) -> dict[str, Any] | None:
    if data is None:
        return None
    text = _text(data, "domain.toml", problems)
    if text is None:
        return None
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"domain.toml is not TOML: {exc}")
        return None
    before = len(problems)
    problems += _unknown(config, _TOP_KEYS, "domain.toml")
    for key in ("read_only", "whitelist", "id_fields"):
        _names(config.get(key, []), f"domain.toml: {key}", problems)
    if config.get("compare", COMPARE[0]) not in COMPARE:
        problems.append(f"domain.toml: compare must be one of {', '.join(repr(c) for c in COMPARE)}")
    chains = config.get("chains", {})
    if not isinstance(chains, dict):
        problems.append("domain.toml: [chains] must be a table")
    else:
        problems += _unknown(chains, _CHAIN_KEYS, "domain.toml: [chains]")
        for key in ("requests", "confirmations", "aborts"):
            _names(chains.get(key, []), f"domain.toml: chains.{key}", problems)
        if not isinstance(chains.get("link", "action_id"), str):
            problems.append("domain.toml: chains.link must be a string")
    suite = config.get("suite")
    if suite is not None:
        problems += list(_suite_problems(suite))
    return config if len(problems) == before else None


def _suite_problems(suite: Any) -> Iterator[str]:
    if not isinstance(suite, dict):
        yield "domain.toml: [suite] must be a table"
        return
    yield from _unknown(suite, _SUITE_KEYS, "domain.toml: [suite]")
    for key in ("name", "id_prefix"):
        if key in suite and not (isinstance(suite[key], str) and suite[key]):
            yield f"domain.toml: suite.{key} must be a non-empty string"
    dims = suite.get("dimensions", DIMENSIONS)
    if not isinstance(dims, dict) or not all(isinstance(v, str) for v in dims.values()):
        yield "domain.toml: [suite.dimensions] must map D1, D2, … to titles"
    categories = suite.get("categories", {})
    if not isinstance(categories, dict):
        yield "domain.toml: [suite.categories] must be a table"
        return
    for name, spec in categories.items():
        where = f"domain.toml: suite.categories.{name}"
        if not isinstance(spec, dict):
            yield f"{where} must be a table"
            continue
        yield from _unknown(spec, _CATEGORY_KEYS, where)
        for key, kind in (
            ("dimension", str),
            ("first_id", int),
            ("order_sensitive", bool),
            ("negative", bool),
        ):
            if not isinstance(spec.get(key), kind) or (kind is int and isinstance(spec.get(key), bool)):
                yield f"{where}.{key} is required and must be a {kind.__name__}"
        for key in ("tools", "allowed_extra"):
            value = spec.get(key, [])
            if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
                yield f"{where}.{key} must be a list of tool names"


def _unknown(table: dict[str, Any], known: set[str], where: str) -> list[str]:
    return [
        f"{where}: unknown key {key!r} (known: {', '.join(sorted(known))})"
        for key in sorted(set(table) - known)
    ]


def _names(value: Any, where: str, problems: list[str]) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where} must be a list of names")


def _responses(data: bytes, problems: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    text = _text(data, "responses.jsonl", problems)
    if text is None:
        return
    for number, line in enumerate(jsonl_lines(text), 1):
        where = f"responses.jsonl:{number}"
        if not line.strip():
            problems.append(f"{where}: blank line")
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            problems.append(f"{where}: not valid JSON: {exc}")
            continue
        if not isinstance(record, dict):
            problems.append(f"{where}: each line must be one JSON object")
            continue
        bad = _unknown(record, _RESPONSE_KEYS, where)
        if not isinstance(record.get("tool"), str):
            bad.append(f"{where}: tool must be a string")
        if not isinstance(record.get("result"), str):
            bad.append(f"{where}: result must be the text the tool returned (a string)")
        if ("arguments" in record) == ("arguments_raw" in record):
            bad.append(f"{where}: give exactly one of arguments (an object) and arguments_raw (text)")
        elif "arguments" in record and not isinstance(record["arguments"], dict):
            bad.append(f"{where}: arguments must be a JSON object (use arguments_raw for other text)")
        elif "arguments_raw" in record and not isinstance(record["arguments_raw"], str):
            bad.append(f"{where}: arguments_raw must be a string")
        if not isinstance(record.get("ok", True), bool):
            bad.append(f"{where}: ok must be a boolean")
        problems += bad
        if not bad:
            yield number, record


def _build(path: Path, files: _Files) -> Domain:
    config = files.config
    chains_table = config.get("chains", {})
    chains = ChainSpec(
        frozenset(chains_table.get("requests", [])),
        frozenset(chains_table.get("confirmations", [])),
        chains_table.get("link", "action_id"),
    )
    aborts = frozenset(chains_table.get("aborts", []))
    recordings: dict[tuple[str, str], list[Recorded]] = {}
    for _, record in files.responses:
        arguments = record["arguments"] if "arguments" in record else record["arguments_raw"]
        recordings.setdefault(replay_key(record["tool"], arguments), []).append(
            Recorded(record["result"], record.get("ok", True))
        )
    book = {key: tuple(found) for key, found in recordings.items()}
    id_names = frozenset(config.get("id_fields", []))
    tool_names = frozenset(t["function"]["name"] for t in files.tools)
    suite_path = path / "cases.jsonl"
    domain = Domain(
        name=PREFIX + str(path.resolve()),
        tools=tuple(files.tools),
        read_only_tools=frozenset(config.get("read_only", [])),
        default_whitelist=tuple(config.get("whitelist", [])),
        id_fields=_id_values(id_names, files.responses),
        system_prompt=files.prompt,
        sandbox_factory=lambda: ReplaySandbox(book, tool_names, chains, aborts),
        chains=chains,
        suite=_suite(config.get("suite"), path),
        suite_path=suite_path if suite_path.is_file() else None,
        input_files=dict(files.raw),
        extra_checks=lambda d: _recorded_problems(d, files.responses, aborts),
        strict_schemas=False,
        trusted=False,
        whole_arguments=config.get("compare", COMPARE[0]) == "whole",
    )
    return domain


def _suite(table: dict[str, Any] | None, path: Path) -> SuiteSpec | None:
    """The suite's spec; its totals are what the category table implies (one case a category),
    so curating a suite is deleting a case's line and its category, nothing to recount."""
    if table is None:
        return None
    categories = {
        name: CategorySpec(
            spec["dimension"],
            spec["first_id"],
            tuple(spec.get("tools", [])),
            spec["order_sensitive"],
            spec["negative"],
            tuple(spec["allowed_extra"]) if "allowed_extra" in spec else None,
        )  # fmt: skip
        for name, spec in table.get("categories", {}).items()
    }
    draft = SuiteSpec(
        name=table.get("name", path.resolve().name),
        id_prefix=table.get("id_prefix", "tr"),
        dimensions=dict(table.get("dimensions", DIMENSIONS)),
        categories=categories,
        totals=SuiteTotals(0, {}, 0),
        variants_per_scenario=1,
        fixtures=(FIXTURE,),
    )
    total, per_dimension, negative = draft.expected_counts()
    return replace(draft, totals=SuiteTotals(total, per_dimension, negative))


def _id_values(
    names: frozenset[str], responses: list[tuple[int, dict[str, Any]]]
) -> dict[str, frozenset[Any]]:
    """A fixture-backed id is valid when the recording knows it: some recorded call sent it or
    some recorded result returned it (under the same argument name, at any depth)."""
    found: dict[str, set[Any]] = {name: set() for name in names}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, child in value.items():
                if key in found and isinstance(child, str | int) and not isinstance(child, bool):
                    found[key].add(child)
                walk(child)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for _, record in responses:
        walk(record.get("arguments"))
        with contextlib.suppress(ValueError, RecursionError):  # a result that is not JSON names no id
            walk(json.loads(record["result"]))
    return {name: frozenset(values) for name, values in found.items()}


def _recorded_problems(
    domain: Domain, responses: list[tuple[int, dict[str, Any]]], aborts: frozenset[str]
) -> list[str]:
    """Every recorded call names a defined tool and (when it is an object) fits its schema."""
    problems = []
    validators = domain.validators
    for number, record in responses:
        tool = record["tool"]
        if tool not in validators:
            problems.append(f"responses.jsonl:{number}: {tool!r} is not a tool in tools.json")
            continue
        try:
            errors = schema_errors(validators[tool], record["arguments"]) if "arguments" in record else []
        except Uncheckable as exc:
            problems.append(f"responses.jsonl:{number}: {tool} arguments cannot be checked: {exc}")
            continue
        for err in errors:
            where = ".".join(str(p) for p in err.absolute_path)
            problems.append(
                f"responses.jsonl:{number}: {tool} arguments{'.' + where if where else ''}: {err.message}"
            )
    problems += [
        f"chains.aborts: {n!r} is not a confirmation tool"
        for n in sorted(aborts - domain.chains.confirmations)
    ]
    for name in sorted(set(domain.id_fields)):
        if not domain.id_fields[name]:
            problems.append(f"id_fields: no recorded call or result holds a {name!r}")
    return problems
