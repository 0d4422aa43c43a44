"""The project's settings file: `traceladder.toml` in the working directory, optional.

    [evaluation]
    rungs = ["step_budget"]   # plug-in rungs that join every evaluation (default: none)

A command-line flag beats the file (`--rungs` replaces `rungs`). Strict, like every data file we
read: an unknown table or key, or a value of the wrong type, is a `UserError` naming the file,
never a setting silently ignored — a misspelt `rung = [...]` must not quietly mean "no plug-ins".
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from traceladder.errors import UserError, first_line

CONFIG_FILE = "traceladder.toml"
_KEYS = {"evaluation": ("rungs",)}


@dataclass(frozen=True)
class ProjectConfig:
    rungs: tuple[str, ...] = ()  # plug-in rungs named for every evaluation
    path: Path | None = None  # the file read; None when there is none


def load_project_config(directory: Path | None = None) -> ProjectConfig:
    """`directory`'s traceladder.toml (default: the working directory), or the defaults."""
    path = (directory or Path.cwd()) / CONFIG_FILE
    if not path.is_file():
        return ProjectConfig()
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
    return ProjectConfig(_names(path, data.get("evaluation", {}).get("rungs", [])), path)


def _names(path: Path, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise UserError(
            f'{path}: [evaluation] rungs must be a list of rung names, e.g. rungs = ["step_budget"]'
        )
    return tuple(value)
