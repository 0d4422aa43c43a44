"""ClickHouse `otel_traces` (what the Collector's clickhouse exporter writes) as a span source.

Read through clickhouse-connect, one query per shard, the shard filter evaluated by the server
(`sources.shard.CLICKHOUSE_SHARD`, bound as parameters): the same SQL runs against a server over
HTTP(S) and against embedded chdb (`chdb:///path`, clickhouse-connect's chdb backend), which the
tests use. Only the exporter's 22 inserted columns are read (`otel_traces.COLUMNS`), so newer
layouts of the table (extra ALIAS columns, text indexes) read the same.

The password never appears in the URL: it is read from `TRACELADDER_CLICKHOUSE_PASSWORD` (a URL
that carries one is refused), kept out of `repr`, and scrubbed from any error text we show.
The source travels to Dask workers with it, so workers need no variable of their own.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pyarrow as pa

from traceladder.errors import UserError, first_line
from traceladder.extras import require
from traceladder.receive.span_sources.otel_traces import COLUMNS, SELECT, to_otel_traces, to_span_rows
from traceladder.receive.span_sources.shard import CLICKHOUSE_SHARD

PASSWORD_ENV = "TRACELADDER_CLICKHOUSE_PASSWORD"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_clients: dict[tuple[Any, ...], Any] = {}  # one client per process and target (chdb: one path per process)


@dataclass(frozen=True)
class ClickHouseSource:
    """`clickhouse://[user@]host[:port][/database][?table=…&secure=1]` or
    `chdb:///abs/path[?database=…&table=…]`; defaults as the exporter's: database `default`,
    table `otel_traces`."""

    host: str  # "" for chdb
    port: int
    user: str
    database: str
    table: str
    secure: bool = False
    chdb_path: str = ""
    timeout_s: float = 10.0
    password: str = field(default="", repr=False)

    @property
    def name(self) -> str:
        if self.chdb_path:
            return f"chdb://{self.chdb_path}?database={self.database}&table={self.table}"
        user = f"{self.user}@" if self.user else ""
        secure = "&secure=1" if self.secure else ""
        return f"clickhouse://{user}{self.host}:{self.port}/{self.database}?table={self.table}{secure}"

    @property
    def qualified(self) -> str:
        return f"`{self.database}`.`{self.table}`"

    def _scrub(self, text: str) -> str:
        return text.replace(self.password, "REDACTED") if self.password else text

    def client(self) -> Any:
        key = (self.host, self.port, self.user, self.database, self.secure, self.chdb_path, self.password)
        found = _clients.get(key)
        if found is not None:
            return found
        cc = require("clickhouse_connect", "reading ClickHouse")
        # The driver logs a failed request before raising it; we report it once, as one line.
        logging.getLogger("clickhouse_connect").setLevel(logging.CRITICAL)
        try:
            if self.chdb_path:
                require("chdb", "embedded ClickHouse (chdb:///path)")
                made = cc.get_client(dsn=f"chdb://{self.chdb_path}")
            else:
                made = cc.get_client(
                    host=self.host, port=self.port, username=self.user or "default", password=self.password,
                    secure=self.secure, connect_timeout=self.timeout_s,
                    send_receive_timeout=max(self.timeout_s, 300.0),
                )  # fmt: skip
        except Exception as exc:  # the driver's errors have no common base worth naming here
            raise UserError(f"cannot connect to {self.name}: {self._scrub(first_line(exc))}") from None
        _clients[key] = made
        return made

    def _query(self, sql: str, parameters: dict[str, Any] | None = None) -> pa.Table:
        try:
            return self.client().query_arrow(sql, parameters=parameters or {}, use_strings=True)
        except UserError:
            raise
        except Exception as exc:
            raise UserError(f"{self.name}: {self._scrub(first_line(exc))}") from None

    def check(self) -> None:
        described = self._query(f"DESCRIBE TABLE {self.qualified}")
        present = set(described.column("name").to_pylist())
        missing = [c for c in COLUMNS if c not in present]
        if missing:
            raise UserError(
                f"{self.name} lacks the columns {', '.join(missing[:6])}: not an otel_traces table as the "
                "Collector's clickhouse exporter creates it"
            )

    def natural_shards(self) -> int | None:
        return None

    def run_models(self, run_id: str | None) -> list[tuple[str, str | None]]:
        # `store.readers.RUN_MODELS` in ClickHouse's words: a missing map key reads as ''.
        sql = (
            "SELECT DISTINCT SpanAttributes['traceladder.run.id'] AS run_id, "
            "SpanAttributes['gen_ai.request.model'] AS model "
            f"FROM {self.qualified} "
            "WHERE SpanAttributes['gen_ai.operation.name'] = 'invoke_agent' "
            "AND SpanAttributes['traceladder.run.id'] != '' "
            "AND ({run:String} = '' OR SpanAttributes['traceladder.run.id'] = {run:String}) "
            "ORDER BY run_id, model"
        )
        rows = self._query(sql, {"run": run_id or ""})
        return [(r, m or None) for r, m in zip(rows.column("run_id").to_pylist(),
                                               rows.column("model").to_pylist(), strict=True)]  # fmt: skip

    def read_shard(self, shard: int, shards: int) -> pa.Table:
        sql = (
            f"SELECT {SELECT} FROM {self.qualified} "
            f"WHERE TraceId != '' AND {CLICKHOUSE_SHARD} = {{shard:UInt64}}"
        )
        return to_span_rows(self._query(sql, {"shards": shards, "shard": shard}))

    def insert_spans(self, spans: pa.Table) -> int:
        """Write store span rows as the exporter would (`otel_traces.to_otel_traces`): how tests,
        benchmarks and a backfill fill the table. Returns the rows written."""
        rows = to_otel_traces(spans)
        if rows.num_rows:
            try:
                self.client().insert_arrow(self.table, rows, database=self.database)
            except Exception as exc:
                raise UserError(f"{self.name}: {self._scrub(first_line(exc))}") from None
        return rows.num_rows

    def command(self, sql: str) -> Any:
        """Run a statement (DDL) on the source's connection."""
        try:
            return self.client().command(sql)
        except UserError:
            raise
        except Exception as exc:
            raise UserError(f"{self.name}: {self._scrub(first_line(exc))}") from None


def parse_clickhouse(spec: str, environ: dict[str, str] | None = None) -> ClickHouseSource:
    """A `clickhouse://` or `chdb://` spec → a source; one-line errors that never echo a password."""
    env = os.environ if environ is None else environ
    parts = urlsplit(spec)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(query) - {"table", "database", "secure", "timeout"})
    shown = f"{parts.scheme}://{parts.hostname or ''}{parts.path}"
    if parts.password is not None:
        raise UserError(f"{shown}: put the password in ${PASSWORD_ENV}, never in the URL (it would be shown)")
    if unknown:
        raise UserError(
            f"{shown}: unknown parameter {unknown[0]!r} (known: table, database, secure, timeout)"
        )
    table = query.get("table", "otel_traces")
    try:
        timeout = float(query.get("timeout", "10"))
    except ValueError:
        raise UserError(f"{shown}: timeout must be a number of seconds") from None
    if parts.scheme == "chdb":
        database = query.get("database", "default")
        path = parts.path
        if parts.netloc or not path.startswith("/"):
            raise UserError(f"{shown}: chdb needs an absolute path: chdb:///abs/path")
        source = ClickHouseSource("", 0, "", database, table, chdb_path=path, timeout_s=timeout)
    else:
        secure = query.get("secure", "").lower() in ("1", "true", "yes")
        if not parts.hostname:
            raise UserError(f"{shown}: no host; e.g. clickhouse://user@host:8123/otel?table=otel_traces")
        database = query.get("database") or parts.path.strip("/") or "default"
        try:
            port = parts.port or (8443 if secure else 8123)
        except ValueError:
            raise UserError(f"{shown}: the port is not a number") from None
        source = ClickHouseSource(
            parts.hostname, port, parts.username or "", database, table, secure, timeout_s=timeout,
            password=env.get(PASSWORD_ENV, ""),
        )  # fmt: skip
    for ident in (source.database, source.table):
        if not _IDENT.fullmatch(ident):
            raise UserError(f"{shown}: {ident!r} is not a plain ClickHouse identifier")
    return source
