"""Optional dependencies: the core install stays small; a feature that needs more says which
extra to install, in one line, instead of an ImportError traceback."""

from __future__ import annotations

import importlib
from types import ModuleType

from traceladder.errors import UserError

# module → the extra that installs it (pyproject.toml [project.optional-dependencies])
EXTRAS = {
    "distributed": "dask",
    "clickhouse_connect": "clickhouse",
    "chdb": "chdb",
    "mcp": "mcp",
}


def require(module: str, feature: str) -> ModuleType:
    """Import `module`, or raise a `UserError` naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS[module]
        raise UserError(
            f"{feature} needs the optional dependency {module!r}: pip install 'traceladder[{extra}]'"
        ) from None
