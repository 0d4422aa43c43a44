"""One loader for every kind of plug-in: rungs, conventions, domains and report formats.

Each kind is a `Kind`: its entry-point group and its built-ins, declared the same way a plug-in
declares itself (a name and a `module` or `module:attribute` target). Built-ins and installed
plug-ins are found, imported and checked by the same code, so a plug-in author and a reader of
this repository see one mechanism:

    [project.entry-points."traceladder.rungs"]          # a module with NUMBER, NAME, NEEDS, ...
    [project.entry-points."traceladder.conventions"]    # a Convention instance or class
    [project.entry-points."traceladder.domains"]        # a Domain, or a callable returning one
    [project.entry-points."traceladder.formats"]        # a ReportFormat

One opt-in rule for all four (docs/extending.md): built-ins are always available; an installed
plug-in is used only where it is *named* — by its flag (`--rungs`, `--domain`, `--format`,
`reindex --conventions`) or in traceladder.toml's `[plugins]` table — so installing a package
never changes a verdict or a stored row by itself. Which names are in force is the caller's to
say; this module only finds and loads.

Reading entry points reads the metadata of every installed package (~70 ms in a development
environment), so a built-in is answered without reading them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from traceladder.errors import UserError

BUILTIN = "built-in"


@dataclass(frozen=True, eq=False)  # one object per kind: hashed by identity (loads are cached per kind)
class Kind:
    """A kind of plug-in. `check` turns what a target names into the plug-in object, or says in
    one line (a `UserError`) why it is not one; it is the kind's own contract, kept by the kind's
    module (a rung's attributes, a convention's class, a domain's name)."""

    name: str  # singular, as users say it: "rung", "convention", "domain", "format"
    group: str  # the entry-point group
    builtins: Mapping[str, str]  # name -> "module" or "module:attribute", in registration order
    check: Callable[[str, str, Any], Any]  # (name, target, loaded object) -> plug-in
    named_by: str  # how a user names one, for messages and `traceladder plugins`


@dataclass(frozen=True)
class Entry:
    """One plug-in, found but not loaded: its kind, name, target and where it comes from
    (`BUILTIN`, or the installed distribution that registers it)."""

    kind: str
    name: str
    target: str
    source: str

    @property
    def builtin(self) -> bool:
        return self.source == BUILTIN


def _installed(kind: Kind) -> dict[str, Entry]:
    found: dict[str, Entry] = {}
    for ep in entry_points(group=kind.group):
        dist = ep.dist.name if ep.dist is not None else "unknown package"
        found.setdefault(ep.name, Entry(kind.name, ep.name, ep.value, dist))
    return found


def entries(kind: Kind) -> dict[str, Entry]:
    """Every plug-in of `kind`: built-ins first, then installed ones by name. An installed plug-in
    never shadows a built-in of the same name (listed by `shadowed`)."""
    builtins = {name: Entry(kind.name, name, target, BUILTIN) for name, target in kind.builtins.items()}
    installed = {n: e for n, e in sorted(_installed(kind).items()) if n not in builtins}
    return {**builtins, **installed}


def shadowed(kind: Kind) -> list[Entry]:
    """Installed plug-ins that reuse a built-in's name (never loaded: the built-in wins)."""
    return [e for n, e in sorted(_installed(kind).items()) if n in kind.builtins]


def find(kind: Kind, name: str) -> Entry:
    """The entry for `name`, or a one-line `UserError` listing what is installed."""
    target = kind.builtins.get(name)
    if target is not None:
        return Entry(kind.name, name, target, BUILTIN)
    known = entries(kind)
    entry = known.get(name)
    if entry is None:
        raise UserError(f"unknown {kind.name} {name!r}; installed: {', '.join(sorted(known)) or 'none'}")
    return entry


def load(kind: Kind, name: str) -> Any:
    """The plug-in `name` of `kind`, imported and checked. Every way it can fail (not installed,
    an import error, the wrong object) is a one-line `UserError`: a broken plug-in is a
    configuration problem, never a traceback."""
    return _load(kind, find(kind, name))


@cache
def _load(kind: Kind, entry: Entry) -> Any:
    module_name, _, attribute = entry.target.partition(":")
    try:
        obj: Any = import_module(module_name)
        for part in filter(None, attribute.split(".")):
            obj = getattr(obj, part)
        return kind.check(entry.name, entry.target, obj)
    except UserError:
        raise
    except Exception as exc:  # whatever a plug-in's import or factory raises, said in one line
        raise UserError(
            f"{kind.name} {entry.name!r} ({entry.target}) failed to load: {type(exc).__name__}: {exc}"
        ) from None
