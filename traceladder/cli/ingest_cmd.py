"""`traceladder ingest`: load OTLP files into the store."""

from __future__ import annotations

import argparse
import sys

from traceladder.cli.common import add_db_option, db_path
from traceladder.errors import ExitCode
from traceladder.text import printable
from traceladder.workflows.ingest import MAX_AUTO_PROCESSES, IngestRequest, ingest_files


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest",
        help="load OTLP files (protobuf, OTLP/JSON, Collector JSON lines; gzip or not) into the store",
        description="Load OTLP traces and logs from files, directories (recursively) or - (stdin): "
        "protobuf Export*ServiceRequest files, OTLP/JSON files (one request, or a JSON array of "
        "requests), and JSON lines as the OpenTelemetry Collector's file exporter writes them; "
        "gzip-compressed or not. Idempotent: ingesting a file twice adds nothing. A file that "
        "cannot be read is reported on one line and the others are still ingested (exit 2).",
    )
    add_db_option(p)
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories, or - for stdin")
    p.add_argument(
        "--signal",
        choices=("traces", "logs"),
        default=None,
        help="what protobuf files hold (default: detected; both share field numbers, so a request "
        "is read both ways and the reading with usable items wins)",
    )
    p.add_argument(
        "--processes",
        type=_processes,
        default=None,
        metavar="N",
        help="decode in N worker processes while this one writes the store (default: the number of "
        f"CPUs, at most {MAX_AUTO_PROCESSES}; input of less than one decode group, 32 MB of JSON, "
        "starts none). The rows, counts and problems are the same for any N",
    )
    p.set_defaults(handler=handle)


def _processes(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= n <= 64:
        raise argparse.ArgumentTypeError(f"must be between 1 and 64, got {n}")
    return n


def handle(args: argparse.Namespace) -> int:
    def report(text: str) -> None:
        print(f"traceladder: ingest: {printable(text)}", file=sys.stderr, flush=True)

    request = IngestRequest(tuple(args.paths), signal=args.signal, processes=args.processes)
    s = ingest_files(db_path(args), request, on_problem=report)
    print(
        f"ingested files={s.files} requests={s.requests} spans={s.spans} (new {s.new_spans}) "
        f"logs={s.logs} (new {s.new_logs}) traces={s.traces} rejected={s.rejected} problems={len(s.problems)}"
    )
    return ExitCode.USER_ERROR if s.problems else ExitCode.OK
