"""Decoding a file's requests in worker processes, in the order they were read.

The reader (the ingesting process) cuts each file's requests into *units* exactly where the
serial decoder (`FileDecoder`) would flush its group of JSON trace bodies — after the body that
fills `GROUP_BYTES`, before a protobuf request, at the end of the file — so a unit decoded on its
own gives exactly the items the serial decoder gives for those requests, in the same order, and
the results are the same with 1 and N processes (tests/ingest/test_parallel_ingest.py). Read problems
travel inside their unit, so every problem is reported where the serial run reports it.

Units are decoded by a pool of processes (spawned: DuckDB and its threads do not survive a fork),
each with its own in-memory DuckDB; at most `2 × processes` units are in flight, so memory stays
bounded whatever the file's size. The store is written only by the ingesting process, in unit
order (one writer). With one process, or input that fits in one unit, nothing is spawned.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from traceladder.decode import DecodeError
from traceladder.decode.bodies import PROTOBUF
from traceladder.receive.ingest.decoding import GROUP_BYTES, Decoded, FileDecoder, joins_group
from traceladder.receive.ingest.requests import ReadError, Request, read_requests
from traceladder.store.collector import collector_paused

Item = Decoded | DecodeError | ReadError


@dataclass(frozen=True)
class Unit:
    """Requests of one file that the serial decoder would decode as one group."""

    file: int  # the file's position among the paths
    last: bool  # the file's last unit
    signal: str | None
    requests: list[Request | ReadError]
    group_bytes: int = GROUP_BYTES  # where the serial decoder flushes its group


def units(path: str | Path, file: int, signal: str | None, group_bytes: int = GROUP_BYTES) -> Iterator[Unit]:
    """The file's requests, cut where `FileDecoder` flushes (always at least one unit)."""
    pending: list[Request | ReadError] = []
    grouped = 0
    for request in read_requests(path):
        if isinstance(request, Request) and request.content_type == PROTOBUF and grouped:
            yield Unit(file, False, signal, pending, group_bytes)
            pending, grouped = [], 0
        pending.append(request)
        if isinstance(request, Request) and joins_group(request, signal):
            grouped += len(request.body)
            if grouped >= group_bytes:
                yield Unit(file, False, signal, pending, group_bytes)
                pending, grouped = [], 0
    yield Unit(file, True, signal, pending, group_bytes)


def decode_unit(unit: Unit) -> list[Item]:
    """Every item of the unit, in the order the serial decoder gives them."""
    decoder = FileDecoder(unit.signal, unit.group_bytes)
    out: list[Item] = []
    with collector_paused():  # the parsed attributes are the next batch's: see `store.collector`
        for request in unit.requests:
            if isinstance(request, ReadError):
                out.append(request)
            else:
                out.extend(decoder.feed(request))
        out.extend(decoder.flush())
    return out


def decode_unit_apart(unit: Unit) -> list[Item]:
    """`decode_unit` in a worker process: the items without the decoder's parsed attributes,
    which would cost more to send back (pickled) than the stage spends parsing their text."""
    out = decode_unit(unit)
    for item in out:
        if isinstance(item, Decoded):
            item.batch.parsed = None
    return out


class Decoders:
    """Units in, items out, in order. A pool of `processes` starts only once the input reaches one
    decode group (`Unit.group_bytes` of request bodies) and a further unit follows it: less input
    than that is decoded here, since starting a process (~0.5 CPU-s) costs more than decoding it.
    Before this rule every second unit started the pool, and a unit ends at every file's end, so
    any two small files started two interpreters."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None
        self._held: Unit | None = None
        self._decoded_bytes = 0  # request bodies decoded here before the pool started
        self._flight: deque[tuple[Unit, Future[list[Item]]]] = deque()

    def submit(self, unit: Unit) -> Iterator[tuple[Unit, list[Item]]]:
        """Queue a unit; yields the results that are due (in order) to keep memory bounded."""
        if self.processes <= 1:
            yield unit, decode_unit(unit)
            return
        if self._pool is None and self._held is None:
            size = sum(len(r.body) for r in unit.requests if isinstance(r, Request))
            if self._decoded_bytes + size < unit.group_bytes:  # nothing is in flight: order holds
                self._decoded_bytes += size
                yield unit, decode_unit(unit)
                return
            self._held = unit
            return
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(self.processes, mp_context=context)
            held, self._held = self._held, None
            if held is not None:
                self._flight.append((held, self._pool.submit(decode_unit_apart, held)))
        self._flight.append((unit, self._pool.submit(decode_unit_apart, unit)))
        while len(self._flight) > 2 * self.processes:
            done, future = self._flight.popleft()
            yield done, future.result()

    def drain(self) -> Iterator[tuple[Unit, list[Item]]]:
        if self._held is not None:
            held, self._held = self._held, None
            yield held, decode_unit(held)
        while self._flight:
            done, future = self._flight.popleft()
            yield done, future.result()

    def close(self) -> None:
        if self._pool is not None:
            for _, future in self._flight:
                future.cancel()
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
