"""`traceladder plugins`: the rungs, conventions, domains and report formats installed here,
whether each is in force and whether it loads."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from traceladder.errors import ExitCode
from traceladder.store.db import open_store
from traceladder.store.store_file import check_store_path
from traceladder.text import printable
from traceladder.workflows.plugins import PluginsRequest, list_plugins

COLUMNS = ("kind", "name", "source", "active", "status")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plugins",
        help="list the installed rungs, conventions, domains and report formats, and which are in force",
        description="Every plug-in of every kind: built-ins (always available) and installed packages' "
        "entry points. An installed plug-in is used only where it is named: --rungs / [plugins] rungs, "
        "[plugins] conventions (recorded in the store at its first write; reindex --conventions changes "
        "it), --domain, --format. With --db, conventions say what that store records. Each plug-in is "
        "loaded: status is ok or the one line loading it gives. Exit 1 when one fails to load.",
    )
    p.add_argument("--db", default=None, metavar="PATH", help="say which conventions this store records")
    p.add_argument("--json", action="store_true", help="one JSON array of rows instead of a table")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    rows = list_plugins(PluginsRequest(store_conventions=_store_conventions(args.db)))
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2, ensure_ascii=False))
    else:
        print("\t".join(COLUMNS))
        for row in rows:
            print("\t".join(printable(str(getattr(row, c))) for c in COLUMNS))
    broken = any(r.status not in ("ok", "not loaded") for r in rows)
    return ExitCode.CHECK_FAILED if broken else ExitCode.OK


def _store_conventions(db: str | None) -> str | None:
    if db is None:
        return None
    from traceladder.store.settings import CONVENTIONS, recorded

    path = Path(db)
    check_store_path(path)
    with open_store(path, read_only=True) as store:
        return recorded(store, CONVENTIONS)
