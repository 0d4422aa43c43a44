"""What a migration is: a name, recorded in `schema_migrations` once applied, and its SQL."""

from __future__ import annotations

Migration = tuple[str, str]
