"""`traceladder plugins`: every plug-in of every kind that is installed here, whether it is in
force, and whether it loads.

A user who installed a package and sees no change asks two questions: is it found, and is it
named? Each row answers both for one plug-in: its kind, name, where it comes from (`built-in` or
the distribution that registers it), what names it (or what would), and `ok` or the one line
loading it gives. Loading imports every plug-in, so the answer is the one `run` would meet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from traceladder.errors import UserError
from traceladder.evaluate.rungs.ladder import RUNGS
from traceladder.extract.conventions.registry import CONVENTIONS
from traceladder.plugins.loader import Entry, Kind, entries, load, shadowed
from traceladder.project_config import ProjectConfig, load_project_config, named_conventions
from traceladder.suite.domain.registry import DOMAINS
from traceladder.workflows.report_formats import FORMATS

KINDS: tuple[Kind, ...] = (RUNGS, CONVENTIONS, DOMAINS, FORMATS)


@dataclass(frozen=True)
class PluginsRequest:
    """`store_conventions`: the convention plug-ins the store at `--db` records (None: no store
    named, or it records none); `directory`: where traceladder.toml is looked for."""

    store_conventions: str | None = None
    directory: Path | None = None


@dataclass(frozen=True)
class PluginRow:
    kind: str
    name: str
    source: str  # "built-in" or the registering distribution
    target: str  # module or module:attribute
    active: str  # what puts it in force, or why it is not
    status: str  # "ok", or the one line loading it gives


def list_plugins(request: PluginsRequest) -> list[PluginRow]:
    """One row per plug-in of every kind, built-ins first within a kind, then installed ones by
    name; an installed plug-in that reuses a built-in's name is listed as ignored."""
    config = load_project_config(request.directory)
    active = _activity(config, request.store_conventions)
    rows: list[PluginRow] = []
    for kind in KINDS:
        for entry in entries(kind).values():
            rows.append(_row(kind, entry, active[kind.name](entry)))
        for entry in shadowed(kind):
            rows.append(PluginRow(kind.name, entry.name, entry.source, entry.target,
                                  "ignored: a built-in has this name", "not loaded"))  # fmt: skip
    return rows


def _row(kind: Kind, entry: Entry, active: str) -> PluginRow:
    try:
        load(kind, entry.name)
        status = "ok"
    except UserError as exc:
        status = str(exc)
    return PluginRow(kind.name, entry.name, entry.source, entry.target, active, status)


def _activity(config: ProjectConfig, store_conventions: str | None) -> dict[str, Callable[[Entry], str]]:
    """Per kind: what puts a plug-in in force (the one rule: it is named)."""
    where = str(config.path) if config.path else "traceladder.toml"
    named, named_by = named_conventions()
    recorded = set(filter(None, (store_conventions or "").split(",")))

    def rung(entry: Entry) -> str:
        if entry.builtin:
            return "always"
        if entry.name in config.rungs:
            return f"named in {where}"
        return "not named: --rungs NAME or [plugins] rungs"

    def convention(entry: Entry) -> str:
        if entry.builtin:
            return "always"
        if store_conventions is not None:
            return "recorded in the store" if entry.name in recorded else "not in the store's setting"
        if entry.name in named.split(","):
            return f"named by {named_by} (recorded at a new store's first write)"
        return "not named: [plugins] conventions, or reindex --conventions"

    def by_flag(flag: str) -> Callable[[Entry], str]:
        return lambda entry: "always" if entry.builtin else f"where {flag} names it"

    domain, report_format = by_flag("--domain"), by_flag("--format")
    return {"rung": rung, "convention": convention, "domain": domain, "format": report_format}
