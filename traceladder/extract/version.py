"""Which extraction derived a row: the stage's version, and the conventions it read with.

Kept apart from the stage (no imports): every command that opens a store compares the store's
stamps with these to say once that it holds rows of an older extraction, and must not pay for
loading the conventions to do so.
"""

from __future__ import annotations

# Raise it whenever a change to the stage (a convention, merging, pairing, definitions, the derived
# span columns) can change a derived row: a store written before then says "run `traceladder
# reindex`" until it is rebuilt. A plug-in's own upgrade is not seen here: `reindex --all` then.
EXTRACTION_VERSION = 2

BUILTIN = "builtin"


def conventions_stamp(plugins: str) -> str:
    """What a derived row records as its conventions: the built-ins, then the plug-ins named in
    the store's setting (comma-separated entry-point names), e.g. `builtin,toyframework`."""
    names = [n.strip() for n in plugins.split(",") if n.strip()]
    return ",".join([BUILTIN, *dict.fromkeys(names)])
