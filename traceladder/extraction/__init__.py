"""The extraction stage: decoded spans and log records → the rows derived from them.

decode (`otlp/`) → **extract** (here, with `conventions/`) → store (`storage/`) → evaluate.
`STAGE.extract(batch, conventions)` is pure (`stage.py`); the store calls it inside its write
transaction (`storage.writes.write_batch`) and when rebuilding (`storage.rebuild`, `traceladder
reindex`). A new convention is one module under `conventions/` and one line in
`conventions/registry.py` (or an installed package's entry point): nothing here changes.
"""

from traceladder.extraction.stage import EXTRACTION_VERSION, STAGE, Stage

__all__ = ["EXTRACTION_VERSION", "STAGE", "Stage"]
