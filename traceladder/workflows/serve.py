"""The `serve` workflow: check the request, record its sampling, run the OTLP/HTTP receiver.

`serve(ServeOptions)` → the exit code when the receiver stops. The request is the receiver's own
frozen `receive.serve.server.ServeOptions` (address, `ReceiverConfig`, workers, queue, fold interval):
a second dataclass with the same fields would be a behaviour written twice.
"""

from __future__ import annotations

import logging
import threading

from traceladder.errors import UserError
from traceladder.receive.serve.server import TOKEN_ENV, ServeOptions, is_loopback, run
from traceladder.store.db import open_store
from traceladder.store.sampling_log import record_sampling


def serve(options: ServeOptions, announce: threading.Event | None = None) -> int:
    """Serve until stopped (SIGINT/SIGTERM). `UserError` before listening for an empty token, a
    non-loopback address without a token (anyone who reaches it could write the store), and a
    store that cannot be opened for writing (foreign, newer, unwritable). `announce` is set once
    the port is bound."""
    token = options.receiver.token
    if token is not None and not token.strip():
        raise UserError("--token cannot be empty")
    if token is None and not is_loopback(options.host):
        raise UserError(
            f"refusing to listen on {options.host} without a token: anyone who can reach it could write "
            f"to the store; set ${TOKEN_ENV} (or --token), or listen on 127.0.0.1"
        )
    logging.basicConfig(level=logging.WARNING, format="traceladder serve: %(message)s")
    # fail now on a foreign, newer or unwritable store, not at the first fold
    with open_store(options.db) as store:
        if options.receiver.sample_rate < 1:
            record_sampling(store, "serve", options.receiver.sample_rate, keep_errors=False)
    return run(options, announce)
