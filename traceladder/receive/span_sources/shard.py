"""Which shard a trace belongs to: one function, spelled identically in Python, DuckDB and
ClickHouse, so an export, a partition filter and a server-side WHERE all agree.

shard = (the low 64 bits of the trace id, read as an unsigned integer) mod N.

Why those bits: W3C Trace Context (level 2) makes the rightmost 7 bytes random when the random
flag is set, while the left half may be a timestamp (X-Ray style ids), so the low half spreads
evenly. Why not `cityHash64`: DuckDB has no CityHash, so a shard computed there could not be
recomputed by DuckDB or pyarrow readers. Verified equal in all three engines on 10k random ids and
the edge cases (all zeros, all f) for N up to 2^32+15 (docs/decisions.md).
"""

from __future__ import annotations

MAX_SHARDS = 65_536


def shard_of(trace_id: str, shards: int) -> int:
    """The shard of a lowercase-or-uppercase hex trace id; an empty id is shard 0."""
    return int(trace_id[16:32], 16) % shards if trace_id[16:32] else 0


def duckdb_shard(column: str, shards: int) -> str:
    """DuckDB SQL for `shard_of(column, shards)` (`shards` is an int we validated, never text)."""
    return f"(coalesce(TRY_CAST('0x' || substr({column}, 17, 16) AS UBIGINT), 0) % {int(shards)})"


# ClickHouse: unhex gives the bytes big-endian; reinterpretAsUInt64 reads little-endian, hence
# the reverse. Bound as server-side parameters so the same text runs on chdb and on a server.
CLICKHOUSE_SHARD = "reinterpretAsUInt64(reverse(unhex(substring(TraceId, 17, 16)))) % {shards:UInt64}"


def check_shards(shards: int) -> int:
    if not 1 <= shards <= MAX_SHARDS:
        raise ValueError(f"shards must be in 1..{MAX_SHARDS}, got {shards}")
    return shards
