"""Hive-partitioned Parquet: the interchange format for object storage.

Layout: `DIR/date=YYYY-MM-DD/shard=K/part-<uuid>.parquet`, the store's span columns
(`SPAN_SCHEMA`; the partition values live in the directory names, not in the files), plus
`DIR/_traceladder.json` naming the shard count — written last, so an interrupted export is
recognisably incomplete.

* `date` is the UTC day the *trace* started (its earliest span), not each span's own day: a
  trace that crosses midnight stays in one partition, so a date filter never splits it.
* `shard` is `sources.shard.shard_of(trace_id, N)`. Reading with N shards, or with a divisor M
  of N, prunes to the shard's own directories (h mod M = (h mod N) mod M); any other count still
  reads correctly, by the hash of the trace id, only without pruning.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from traceladder.errors import UserError, first_line
from traceladder.receive.span_sources.shard import duckdb_shard
from traceladder.store.db import Store
from traceladder.store.readers import RUN_MODELS
from traceladder.store.span_copies import copy_spans_to_parquet
from traceladder.store.spans import SPAN_COLUMNS, SPAN_SCHEMA

MANIFEST = "_traceladder.json"
LAYOUT = "traceladder.spans/1"
# DuckDB's share while exporting, on one thread. The COPY streams spans, but a partitioned write
# buffers rows before it writes them: by default a thread keeps 524,288 rows before handing them on
# and each partition fills a row group of 122,880 rows, so the export held most of a 1M-span store
# (decision 481: 214 MB at 100k spans, 410 at 1M; under 96 MB it failed at 1M). Rows are now handed
# on, and written, in row groups sized so that one per open partition (a day's shard) fits a fixed
# buffer at the store's average span width (`store.span_copies`): the buffers no longer grow
# with the store, and wide agent spans get smaller row groups instead of a larger share.
# (DuckDB's `ROW_GROUP_SIZE_BYTES` is not honoured by a partitioned write, measured.)
EXPORT_MEMORY = "64MB"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def export_parquet(store: Store, out: Path, shards: int) -> dict[str, Any]:
    """Write every span of the store under `out` (which must not exist or be empty); returns the
    manifest. One DuckDB COPY: partitioned, zstd, streaming (bench: ~100k spans/s)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} already exists and is not an empty directory; pass a new --out")
    out.mkdir(parents=True, exist_ok=True)
    spans, traces = copy_spans_to_parquet(store, out, duckdb_shard("trace_id", shards), shards, EXPORT_MEMORY)
    manifest = {"layout": LAYOUT, "shards": shards, "spans": spans, "traces": traces}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


@dataclass(frozen=True)
class ParquetSource:
    """Spans in a Hive-partitioned Parquet directory written by `traceladder export`."""

    root: Path

    @property
    def name(self) -> str:
        return f"parquet:{self.root}"

    def _manifest(self) -> dict[str, Any] | None:
        path = self.root / MANIFEST
        if not path.is_file():
            return None
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"{path} cannot be read: {first_line(exc)}") from None
        if not isinstance(manifest, dict) or manifest.get("layout") != LAYOUT:
            raise UserError(f"{path} is not a traceladder export manifest ({LAYOUT})")
        return manifest

    def _files(self) -> list[Path]:
        return sorted(self.root.glob("**/*.parquet"))

    def check(self) -> None:
        if not self.root.is_dir():
            raise UserError(f"parquet source {self.root} is not a directory; pass parquet:DIR")
        manifest = self._manifest()
        files = self._files()
        if not files:
            if manifest is not None and manifest.get("spans") == 0:
                return  # an export of an empty store
            raise UserError(
                f"parquet source {self.root} has no .parquet files; write one with `traceladder export`"
            )
        con = duckdb.connect()
        try:
            names = {
                row[0]
                for row in con.execute(f"SELECT name FROM parquet_schema({_quote(str(files[0]))})").fetchall()
            }
        except duckdb.Error as exc:
            raise UserError(f"parquet source {files[0]} cannot be read: {first_line(exc)}") from None
        finally:
            con.close()
        missing = [c for c in SPAN_COLUMNS if c not in names]
        if missing:
            raise UserError(
                f"parquet source {self.root} lacks the span columns {', '.join(missing[:5])}; "
                "it must be written by `traceladder export`"
            )

    def natural_shards(self) -> int | None:
        manifest = self._manifest()
        shards = manifest.get("shards") if manifest else None
        return shards if isinstance(shards, int) and shards > 0 else None

    def _glob(self) -> str:
        return f"read_parquet({_quote(str(self.root / '**' / '*.parquet'))}, hive_partitioning = true)"

    def run_models(self, run_id: str | None) -> list[tuple[str, str | None]]:
        if not self._files():
            return []
        con = duckdb.connect()
        try:
            rows = con.execute(RUN_MODELS.format(spans=self._glob()), {"run": run_id}).fetchall()
        except duckdb.Error as exc:
            raise UserError(f"parquet source {self.root}: {first_line(exc)}") from None
        finally:
            con.close()
        return [(r, m) for r, m in rows]

    def read_shard(self, shard: int, shards: int) -> pa.Table:
        if not self._files():
            return SPAN_SCHEMA.empty_table()
        where = f"{duckdb_shard('trace_id', shards)} = {int(shard)}"
        laid_out = self.natural_shards()
        if laid_out and laid_out % shards == 0:  # only this shard's directories are opened
            where += f" AND shard IN ({', '.join(str(k) for k in range(shard, laid_out, shards))})"
        con = duckdb.connect()
        try:
            table = con.sql(
                f"SELECT {', '.join(SPAN_COLUMNS)} FROM {self._glob()} WHERE {where}"
            ).to_arrow_table()
        except duckdb.Error as exc:
            raise UserError(f"parquet source {self.root}: {first_line(exc)}") from None
        finally:
            con.close()
        return table.cast(SPAN_SCHEMA)
