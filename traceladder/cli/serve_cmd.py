"""`traceladder serve`: receive OTLP/HTTP traces and logs into the store."""

from __future__ import annotations

import argparse
import os
import re

from traceladder.cli.common import add_db_option, db_path, int_range, sample_rate, seconds
from traceladder.receive.serve.handler import ReceiverConfig
from traceladder.receive.serve.server import TOKEN_ENV, ServeOptions

DEFAULT_MAX_BODY = 64 << 20  # the OTLP spec's recommended cap for a decompressed request
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}  # fmt: skip


def size_arg(text: str) -> int:
    """A byte count: 1048576, 512KiB, 64MiB, 1G (binary units)."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 1048576, 512KiB, 64MiB)")
    value = int(m.group(1)) * _UNITS[unit]
    if not 1024 <= value <= 4 << 30:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 1KiB and 4GiB")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="receive OTLP/HTTP traces and logs (protobuf or JSON) into the store",
        description="An OTLP/HTTP receiver: POST /v1/traces and /v1/logs (application/x-protobuf or "
        "application/json, optionally gzip), GET /healthz. A 200 means the rows are durable. Other "
        "commands keep working on the same --db while it runs: the receiver writes segment files "
        "beside the store, and every command folds them in when it opens the store.",
    )
    add_db_option(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int_range(0, 65535), default=4318, help="port (default: 4318; 0 = any)")
    p.add_argument(
        "--token",
        default=None,
        help=f"require `Authorization: Bearer TOKEN` (default: ${TOKEN_ENV}); required off loopback",
    )
    p.add_argument(
        "--max-body",
        type=size_arg,
        default=DEFAULT_MAX_BODY,
        metavar="SIZE",
        help="largest request accepted, after decompression (default: 64MiB)",
    )
    p.add_argument(
        "--workers",
        type=int_range(1, 64),
        default=min(4, os.cpu_count() or 1),
        metavar="N",
        help="receiving processes sharing the port (default: CPU count, at most 4)",
    )
    p.add_argument(
        "--queue-rows",
        type=int_range(1000, 100_000_000),
        default=500_000,
        metavar="N",
        help="answer 503 + Retry-After while more rows than this wait to be written (default: 500000)",
    )
    p.add_argument(
        "--fold-interval",
        type=seconds(high=3600),
        default=1.0,
        metavar="SECONDS",
        help="how often to fold received segments into the store when it is free (default: 1)",
    )
    p.add_argument(
        "--read-timeout",
        type=seconds(high=3600),
        default=30.0,
        metavar="SECONDS",
        help="drop a connection that sends nothing for this long, between requests or within one "
        "(default: 30)",
    )
    p.add_argument(
        "--header-timeout",
        type=seconds(high=3600),
        default=10.0,
        metavar="SECONDS",
        help="a request's line and headers must all arrive within this long of their first byte, "
        "however they trickle; otherwise 408 and the connection closes (default: 10)",
    )
    p.add_argument(
        "--body-timeout",
        type=seconds(high=3600),
        default=60.0,
        metavar="SECONDS",
        help="a request's whole body must arrive within this long of its headers; otherwise 408 "
        "(default: 60)",
    )
    p.add_argument(
        "--max-connections",
        type=int_range(1, 100_000),
        default=256,
        metavar="N",
        help="open connections per process; at the cap a new one closes the connection idle the "
        "longest (between requests or still sending its headers), and gets 503 + Retry-After only "
        "when all are busy being answered. Raises the open-file limit to fit (default: 256)",
    )
    p.add_argument(
        "--sample",
        type=sample_rate,
        default=1.0,
        metavar="RATE",
        help="store this fraction of traces, chosen by trace id as OpenTelemetry's TraceIdRatioBased "
        "sampler does (every span of a trace agrees, on every worker); the rest is dropped before "
        "storing. Recorded in the `sampling` table. Default 1",
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from traceladder.workflows.serve import serve

    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    options = ServeOptions(
        db=db_path(args),
        host=args.host,
        port=args.port,
        receiver=ReceiverConfig(
            args.max_body,
            token,
            "otlp",
            args.read_timeout,
            args.sample,
            header_timeout_s=args.header_timeout,
            body_timeout_s=args.body_timeout,
            max_connections=args.max_connections,
        ),
        workers=args.workers,
        queue_rows=args.queue_rows,
        fold_interval_s=args.fold_interval,
    )
    return serve(options)
