"""The extraction stage: decoded spans and log records → the rows derived from them.

decode (`decode/`) → **extract** (here, with `extract/conventions/`) → store (`store/`) → evaluate.
`STAGE.extract(batch, conventions)` is pure (`stage.py`); the store calls it inside its write
transaction (`store.writes.write_batch`) and when rebuilding (`store.rebuild`, `traceladder
reindex`). `version.py` is the stamp every derived row carries, importable alone: every command
compares a store's stamps with it without loading the conventions. A new convention is one module
under `extract/conventions/` and one line in `extract/conventions/registry.py` (or an installed
package's entry point): nothing here changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from traceladder.extract.version import EXTRACTION_VERSION

if TYPE_CHECKING:
    from traceladder.extract.stage import STAGE, Stage

__all__ = ["EXTRACTION_VERSION", "STAGE", "Stage"]


def __getattr__(name: str) -> object:
    """The stage is imported on first use: it needs Arrow and the conventions, which a command
    that only reads the store should not pay for at start-up."""
    if name in ("STAGE", "Stage"):
        from traceladder.extract import stage

        return getattr(stage, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
