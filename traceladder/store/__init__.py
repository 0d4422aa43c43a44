"""Storage: the DuckDB span store, its migrations, the span exporter and bulk readers/writers."""

from typing import TYPE_CHECKING

from traceladder.store.db import Store, open_store

if TYPE_CHECKING:
    from traceladder.store.exporter import DuckDBSpanExporter

__all__ = ["DuckDBSpanExporter", "Store", "open_store"]


def __getattr__(name: str) -> object:
    """The exporter is imported on first use: it needs the OTel SDK and Arrow, which commands that
    only read the store (`sql`, `report`, `gate`) should not pay for at start-up."""
    if name == "DuckDBSpanExporter":
        from traceladder.store.exporter import DuckDBSpanExporter

        return DuckDBSpanExporter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
