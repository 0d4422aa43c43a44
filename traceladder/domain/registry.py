"""Finding a domain by name: the built-in retail domain, and any installed package that registers
one in the `traceladder.domains` entry-point group, e.g. in its pyproject.toml:

    [project.entry-points."traceladder.domains"]
    calendar = "my_package.calendar:load_domain"

The entry point names a zero-argument callable returning a `Domain` (or a `Domain` itself).
Every command that needs a domain resolves it once, here, from `--domain NAME` — or from
`--domain DIR` / `dir:PATH`, a declarative domain directory (traceladder.domain.declarative).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path

from traceladder.domain.base import Domain
from traceladder.errors import UserError
from traceladder.files import read_text_file

GROUP = "traceladder.domains"
DEFAULT_DOMAIN = "retail"
_BUILTIN = {"retail": "traceladder.domain.retail.domain:load_retail_domain"}


def available() -> dict[str, str]:
    """Domain name → `module:attribute`, built-ins first; an installed plug-in cannot shadow one."""
    found = {ep.name: ep.value for ep in entry_points(group=GROUP)}
    return {**found, **_BUILTIN}


def is_installed(name: str) -> bool:
    """Whether `name` is a built-in or an installed plug-in's domain (`name in available()`). A
    built-in is answered without reading the entry points: that reads the metadata of every
    installed package (~70 ms in a development environment, on every `report`)."""
    return name in _BUILTIN or name in available()


@cache
def load_domain(name: str = DEFAULT_DOMAIN) -> Domain:
    target = _BUILTIN.get(name)  # a built-in is never a directory, and no plug-in shadows it
    if target is None:
        from traceladder.domain.declarative import directory_spec, load_directory

        installed = available()
        directory = directory_spec(name, frozenset(installed))
        if directory is not None:
            return load_directory(directory)
        target = installed.get(name)
        if target is None:
            raise UserError(f"unknown domain {name!r}; installed: {', '.join(sorted(installed))}")
    module_name, _, attribute = target.partition(":")
    try:
        obj = getattr(import_module(module_name), attribute)
        domain = obj() if callable(obj) and not isinstance(obj, Domain) else obj
    except Exception as exc:  # a broken plug-in is a configuration problem, said in one line
        raise UserError(f"domain {name!r} ({target}) failed to load: {type(exc).__name__}: {exc}") from None
    if not isinstance(domain, Domain):
        raise UserError(f"domain {name!r} ({target}) did not return a traceladder Domain")
    if domain.name != name:
        raise UserError(f"domain {name!r} ({target}) calls itself {domain.name!r}; the names must match")
    return domain


def with_system_prompt(domain: Domain, path: Path | None) -> Domain:
    """The domain, with its system prompt replaced by the file's text when one is named."""
    if path is None:
        return domain
    prompt = read_text_file(path, "system prompt")
    if not prompt.strip():
        raise UserError(f"system prompt file {path} is empty")
    return replace(domain, system_prompt=prompt)
