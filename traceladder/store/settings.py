"""The store's own settings (`store_settings`): what the store decides for every writer.

`conventions`: the convention plug-ins the extraction stage reads with (comma-separated
entry-point names; "" for the built-ins alone). It used to be an environment variable read at
every write, so two writers of one store could read its spans differently; now the first write
records it — what the project's traceladder.toml names in `[plugins] conventions`, else
`TRACELADDER_CONVENTIONS` (how existing users carry their choice over) — and
`traceladder reindex --conventions NAMES` changes it (and rebuilds).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import duckdb

from traceladder.project_config import named_conventions
from traceladder.store.db import Store

log = logging.getLogger(__name__)

CONVENTIONS = "conventions"


def _normalised(names: str) -> str:
    return ",".join(dict.fromkeys(n.strip() for n in names.split(",") if n.strip()))


def recorded(store: Store, name: str) -> str | None:
    """A setting's value, None when the store has none (or predates settings)."""
    try:
        rows = store.fetchall("SELECT value FROM store_settings WHERE name = ?", [name])
    except duckdb.CatalogException:  # a store opened read-only before its migration to settings
        return None
    return rows[0][0] if rows else None


def record(store: Store, name: str, value: str) -> None:
    store.execute(
        "INSERT INTO store_settings (name, value) VALUES (?, ?) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        [name, value],
    )


_SAID: set[tuple[str, str]] = set()


def conventions_setting(store: Store, say: Callable[[str], None] = log.warning) -> tuple[str, bool]:
    """(the plug-ins this store reads with, whether the writer must record them). A store without
    a setting reads with what `project_config.named_conventions` names (or none), which its first
    write records — in its own transaction, so a name that fails to load records nothing. A name
    that disagrees with the recorded setting is ignored, said once per process."""
    wanted, named_by = named_conventions()
    found = recorded(store, CONVENTIONS)
    if found is None:
        return wanted, not store.read_only
    if named_by is not None and wanted != found and (str(store.path), wanted) not in _SAID:
        _SAID.add((str(store.path), wanted))
        say(
            f"{named_by}={wanted!r} is ignored: this store reads with its recorded conventions "
            f"({found!r}); change them with `traceladder reindex --conventions NAMES`"
        )
    return found, False


_STALE = "(extraction IS DISTINCT FROM $version OR conventions IS DISTINCT FROM $conventions)"


def stale_traces(store: Store, version: int, conventions_of: Callable[[str], str]) -> int | None:
    """How many traces hold rows of another extraction than (`version`, the conventions stamp
    `conventions_of` gives the store's setting); None when the store predates stamps (opened
    read-only before its migration: every trace is then stale)."""
    setting = recorded(store, CONVENTIONS)
    stamp = conventions_of(setting if setting is not None else named_conventions()[0])
    try:
        found = store.fetchall(
            f"SELECT count(*) FROM traces WHERE {_STALE}", {"version": version, "conventions": stamp}
        )
    except duckdb.Error:
        return None
    return int(found[0][0])


_TOLD: set[str] = set()


def say_if_stale(
    store: Store, version: int, conventions_of: Callable[[str], str], say: Callable[[str], None]
) -> None:
    """Once per store and process: say that the store holds rows of an older extraction."""
    if str(store.path) in _TOLD:
        return
    stale = stale_traces(store, version, conventions_of)
    if stale == 0:
        return
    _TOLD.add(str(store.path))
    what = "its rows" if stale is None else f"the rows of {stale:,} trace{'s' if stale != 1 else ''}"
    say(
        f"{what} were derived by an older extraction (or other conventions) than this traceladder's; "
        "run `traceladder reindex` to rebuild them"
    )
