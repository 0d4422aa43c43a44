"""Where shard tasks run: in this process, or on a Dask distributed cluster. A small interface, so
another engine (Ray) is one more class.

Contract of `map_unordered(fn, items)`: call `fn` on every item and yield each result once, in
completion order; raise if any task fails for good (nothing is yielded twice, nothing skipped).
Tasks must be pure functions of their item: Dask re-runs a task whose worker died
(`distributed.scheduler.allowed-failures`, default 3, then `KilledWorker`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from traceladder.errors import UserError, first_line
from traceladder.extras import require

R = TypeVar("R")

# Every listener a local cluster opens is on loopback, the dashboards too: `dashboard_address=None`
# still binds the scheduler's HTTP server (127.0.0.1:8787, a fixed port), so pin port 0.
LOOPBACK = "127.0.0.1"


class Executor(Protocol):
    def map_unordered(self, fn: Callable[[int], R], items: Sequence[int]) -> Iterator[R]: ...

    def close(self) -> None: ...


class InProcess:
    """One task after another, here: the single-process path (and the reference for tests)."""

    def map_unordered(self, fn: Callable[[int], R], items: Sequence[int]) -> Iterator[R]:
        for item in items:
            yield fn(item)

    def close(self) -> None:
        pass


class DaskExecutor:
    """Tasks on a Dask distributed cluster: `tcp://HOST:8786` (a running scheduler) or `local:N`
    (N worker processes started here on 127.0.0.1, one thread each — judging is CPU-bound Python,
    so threads would share one GIL)."""

    def __init__(self, address: str, *, timeout_s: float = 10.0) -> None:
        distributed = require("distributed", "--dask")
        self.address = address
        self._cluster: Any = None
        try:
            if address.startswith("local:"):
                workers = int(address.removeprefix("local:") or "0")
                if not 1 <= workers <= 64:
                    raise ValueError
                self._cluster = distributed.LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True, host=LOOPBACK,
                    dashboard_address=f"{LOOPBACK}:0", worker_dashboard_address=f"{LOOPBACK}:0",
                    silence_logs=logging.ERROR,
                )  # fmt: skip
                target: Any = self._cluster
            else:
                target = address
            self.client = distributed.Client(target, timeout=timeout_s, set_as_default=False)
        except ValueError:
            raise UserError(f"--dask {address!r}: use tcp://HOST:PORT or local:N (1..64 workers)") from None
        except (OSError, TimeoutError) as exc:
            self.close()
            raise UserError(
                f"cannot reach the Dask scheduler at {address} within {timeout_s:g}s ({first_line(exc)})"
            ) from None

    def map_unordered(self, fn: Callable[[int], R], items: Sequence[int]) -> Iterator[R]:
        distributed = require("distributed", "--dask")
        run = uuid.uuid4().hex[:12]
        futures = self.client.map(fn, list(items), key=[f"traceladder-shard-{i}-{run}" for i in items])
        try:
            for future in distributed.as_completed(futures, loop=self.client.loop):
                try:
                    yield future.result()
                except distributed.KilledWorker as exc:
                    raise UserError(
                        f"a shard task killed every worker that ran it: {first_line(exc)}"
                    ) from None
        finally:
            self.client.cancel(futures)

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def executor_for(address: str | None, *, timeout_s: float = 10.0) -> Executor:
    return DaskExecutor(address, timeout_s=timeout_s) if address else InProcess()
