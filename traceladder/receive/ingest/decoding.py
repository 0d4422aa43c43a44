"""Decoding the requests of one file with the receiver's decoders (`decode.bodies`).

Protobuf does not say which signal it holds — traces and logs requests share their field
numbers — so both readings are tried and the one with more usable items wins (`--signal`
overrides). OTLP/JSON says it (`resourceSpans` / `resourceLogs`). JSON trace requests are
gathered in groups of `GROUP_BYTES` — the unit `receive.ingest.parallel` hands a process and the rows
written together — each decoded by the one OTLP/JSON decoder `serve` uses (docs/decisions.md 371).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from traceladder.decode import DecodedBatch, DecodeError, decode_logs, decode_traces
from traceladder.decode.bodies import JSON, PROTOBUF
from traceladder.receive.ingest.requests import Request

GROUP_BYTES = 32 << 20  # JSON trace bodies per DuckDB query (the default; `ingest` may pass less)


@dataclass(frozen=True)
class Decoded:
    where: str
    signal: str  # "traces" | "logs"
    batch: DecodedBatch


def json_signal(body: bytes) -> str | None:
    """The signal of an OTLP/JSON body: the top-level key that comes first; None if neither."""
    spans_at, logs_at = body.find(b'"resourceSpans"'), body.find(b'"resourceLogs"')
    if spans_at < 0 and logs_at < 0:
        return None
    return "logs" if logs_at >= 0 and (spans_at < 0 or logs_at < spans_at) else "traces"


def decode_protobuf(body: bytes, signal: str | None) -> tuple[str, DecodedBatch]:
    if signal is not None:
        return signal, (decode_traces if signal == "traces" else decode_logs)(body, PROTOBUF)
    readings: dict[str, DecodedBatch] = {}
    problems: list[str] = []
    for name, decode in (("traces", decode_traces), ("logs", decode_logs)):
        try:
            readings[name] = decode(body, PROTOBUF)
        except DecodeError as exc:
            problems.append(str(exc))
    if not readings:  # truncated, or not protobuf at all
        raise DecodeError(f"not OTLP protobuf: {problems[0]}")
    # A logs request read as traces yields spans without valid ids (all rejected), and vice versa.
    return max(readings.items(), key=lambda kv: (kv[1].table.num_rows, kv[0] == "traces"))


def joins_group(request: Request, signal: str | None) -> bool:
    """Whether `FileDecoder.feed` adds this request to its group of JSON trace bodies (the rule
    `receive.ingest.parallel` cuts units by)."""
    if request.content_type == PROTOBUF:
        return False
    found = json_signal(request.body)
    if found is None and request.body.strip() not in (b"{}", b""):
        return False
    return (signal or found or "traces") == "traces"


class FileDecoder:
    """Decodes one file's requests; yields results in file order (JSON traces grouped)."""

    def __init__(self, signal: str | None, group_bytes: int = GROUP_BYTES) -> None:
        self.signal = signal
        self.group_bytes = group_bytes
        self._group: list[Request] = []
        self._group_bytes = 0

    def feed(self, request: Request) -> Iterator[Decoded | DecodeError]:
        if request.content_type == PROTOBUF:
            yield from self.flush()
            try:
                signal, batch = decode_protobuf(request.body, self.signal)
            except DecodeError as exc:
                yield DecodeError(f"{request.where}: {exc}")
                return
            yield Decoded(request.where, signal, batch)
            return
        found = json_signal(request.body)
        if found is None and request.body.strip() not in (b"{}", b""):
            yield DecodeError(f"{request.where}: not an OTLP/JSON request: no resourceSpans or resourceLogs")
            return
        signal = self.signal or found or "traces"
        if signal == "logs":
            yield from self._exact(request, "logs")
            return
        self._group.append(request)
        self._group_bytes += len(request.body)
        if self._group_bytes >= self.group_bytes:
            yield from self.flush()

    def _exact(self, request: Request, signal: str) -> Iterator[Decoded | DecodeError]:
        decode = decode_traces if signal == "traces" else decode_logs
        try:
            yield Decoded(request.where, signal, decode(request.body, JSON))
        except DecodeError as exc:
            yield DecodeError(f"{request.where}: {exc}")

    def flush(self) -> Iterator[Decoded | DecodeError]:
        group, self._group, self._group_bytes = self._group, [], 0
        for request in group:
            yield from self._exact(request, "traces")
