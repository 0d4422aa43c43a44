"""Finding a domain by name: the built-in retail domain, and any installed package that registers
one in the `traceladder.domains` entry-point group, e.g. in its pyproject.toml:

    [project.entry-points."traceladder.domains"]
    calendar = "my_package.calendar:load_domain"

The entry point names a zero-argument callable returning a `Domain` (or a `Domain` itself).
Every command that needs a domain resolves it once, here, from `--domain NAME` — or from
`--domain DIR` / `dir:PATH`, a declarative domain directory (traceladder.suite.domain.declarative).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

from traceladder.errors import UserError
from traceladder.files import read_text_file
from traceladder.plugins.loader import Kind, entries, load
from traceladder.suite.domain.base import Domain

DEFAULT_DOMAIN = "retail"


def _checked(name: str, target: str, obj: object) -> Domain:
    domain = obj() if callable(obj) and not isinstance(obj, Domain) else obj
    if not isinstance(domain, Domain):
        raise UserError(f"domain {name!r} ({target}) did not return a traceladder Domain")
    if domain.name != name:
        raise UserError(f"domain {name!r} ({target}) calls itself {domain.name!r}; the names must match")
    return domain


DOMAINS = Kind(
    name="domain",
    group="traceladder.domains",
    builtins={"retail": "traceladder.suite.domain.retail.domain:load_retail_domain"},
    check=_checked,
    named_by="--domain NAME",
)


def available() -> dict[str, str]:
    """Domain name -> `module:attribute`, built-ins first; an installed plug-in cannot shadow one."""
    return {name: entry.target for name, entry in entries(DOMAINS).items()}


def is_installed(name: str) -> bool:
    """Whether `name` is a built-in or an installed plug-in's domain (`name in available()`); a
    built-in is answered without reading the entry points (see `plugins.loader`)."""
    return name in DOMAINS.builtins or name in available()


@cache
def load_domain(name: str = DEFAULT_DOMAIN) -> Domain:
    if name not in DOMAINS.builtins:  # a built-in is never a directory, and no plug-in shadows it
        from traceladder.suite.domain.declarative import directory_spec, load_directory

        directory = directory_spec(name, frozenset(available()))
        if directory is not None:
            return load_directory(directory)
    domain: Domain = load(DOMAINS, name)
    return domain


def with_system_prompt(domain: Domain, path: Path | None) -> Domain:
    """The domain, with its system prompt replaced by the file's text when one is named."""
    if path is None:
        return domain
    prompt = read_text_file(path, "system prompt")
    if not prompt.strip():
        raise UserError(f"system prompt file {path} is empty")
    return replace(domain, system_prompt=prompt)
