"""Storage: the DuckDB span store, its migrations, the span exporter and bulk readers/writers."""

from traceladder.storage.db import Store, open_store
from traceladder.storage.exporter import DuckDBSpanExporter

__all__ = ["DuckDBSpanExporter", "Store", "open_store"]
