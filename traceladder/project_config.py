"""The project's settings file: `traceladder.toml` in the working directory, optional.

    [plugins]
    rungs = ["step_budget"]        # plug-in rungs that join every evaluation (default: none)
    conventions = ["myframework"]  # convention plug-ins a new store records at its first write

This is the one place a plug-in is opted into besides its flag (docs/extending.md: built-ins are
always on; an installed plug-in is used only where it is named). `[evaluation] rungs` is the
older spelling of `[plugins] rungs`, still read. A command-line flag beats the file (`--rungs`
replaces `rungs`). Strict, like every data file we
read: an unknown table or key, or a value of the wrong type, is a `UserError` naming the file,
never a setting silently ignored — a misspelt `rung = [...]` must not quietly mean "no plug-ins".
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from traceladder.errors import UserError, first_line

CONFIG_FILE = "traceladder.toml"
CONVENTIONS_ENV = "TRACELADDER_CONVENTIONS"  # the former home of [plugins] conventions, still read
_KEYS = {"plugins": ("rungs", "conventions"), "evaluation": ("rungs",)}


@dataclass(frozen=True)
class ProjectConfig:
    rungs: tuple[str, ...] = ()  # plug-in rungs named for every evaluation
    path: Path | None = None  # the file read; None when there is none
    conventions: tuple[str, ...] | None = None  # convention plug-ins named; None: the file names none


def load_project_config(directory: Path | None = None) -> ProjectConfig:
    """`directory`'s traceladder.toml (default: the working directory), or the defaults."""
    path = (directory or Path.cwd()) / CONFIG_FILE
    if not path.is_file():
        return ProjectConfig()
    import tomllib  # only when there is a file: every store open asks, most find none (~5 ms)

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: cannot be read: {first_line(exc)}") from None
    for table, value in data.items():
        if table not in _KEYS:
            raise UserError(f"{path}: unknown table [{table}]; known: {', '.join(f'[{t}]' for t in _KEYS)}")
        if not isinstance(value, dict):
            raise UserError(f"{path}: {table} must be a table ([{table}])")
        for key in value:
            if key not in _KEYS[table]:
                raise UserError(f"{path}: unknown key {key!r} in [{table}]; known: {', '.join(_KEYS[table])}")
    plugins, evaluation = data.get("plugins", {}), data.get("evaluation", {})
    if "rungs" in plugins and "rungs" in evaluation:
        raise UserError(f"{path}: rungs are named twice; keep [plugins] rungs and drop [evaluation] rungs")
    table = "plugins" if "rungs" in plugins else "evaluation"
    rungs = _names(path, table, "rungs", {**evaluation, **plugins}.get("rungs", []), "step_budget")
    conventions = plugins.get("conventions")
    named = (
        None if conventions is None else _names(path, "plugins", "conventions", conventions, "myframework")
    )
    return ProjectConfig(rungs, path, named)


def _names(path: Path, table: str, key: str, value: Any, example: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        noun = key[:-1]
        raise UserError(f'{path}: [{table}] {key} must be a list of {noun} names, e.g. {key} = ["{example}"]')
    return tuple(value)


def named_conventions() -> tuple[str, str | None]:
    """The convention plug-ins named for a store that records none yet (comma-separated, each
    once), and who named them: traceladder.toml's `[plugins] conventions` when it names any, else
    `TRACELADDER_CONVENTIONS`, else none (`("", None)`). Read once per working directory and
    value of the variable: the registry asks on every lookup."""
    return _named_conventions(Path.cwd(), os.environ.get(CONVENTIONS_ENV))


@cache
def _named_conventions(directory: Path, env: str | None) -> tuple[str, str | None]:
    config = load_project_config(directory)
    if config.conventions is not None:
        return _joined(config.conventions), f"{config.path} [plugins] conventions"
    if env is not None:
        return _joined(env.split(",")), CONVENTIONS_ENV
    return "", None


def _joined(names: tuple[str, ...] | list[str]) -> str:
    return ",".join(dict.fromkeys(n.strip() for n in names if n.strip()))
