"""A store an older traceladder wrote, opened by a reading command (decision 591): reading never
upgrades it (read-only commands never write), so the command says once what is missing and which
command upgrades it — instead of failing later on a bare "Catalog Error" with no hint."""

from __future__ import annotations

import duckdb

from tests.conftest import cli
from traceladder.store.migrations import MIGRATIONS


def _older_store(path, missing: int) -> None:
    """A store as traceladder wrote it before its last `missing` migrations."""
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
        for name, sql in MIGRATIONS[:-missing]:
            conn.execute(sql)
            conn.execute("INSERT INTO schema_migrations VALUES (?, now())", [name])


def test_a_reader_says_once_that_the_store_is_older_and_changes_nothing(tmp_path):
    db = tmp_path / "old.duckdb"
    _older_store(db, missing=2)
    before = db.read_bytes()
    done = cli("sql", "--db", str(db), "SELECT count(*) AS n FROM spans")
    assert done.returncode == 0, done.stderr
    last = MIGRATIONS[-2][0]
    assert done.stderr.count("was written by an older traceladder") == 1
    assert done.stderr.count("\n") == 1  # one line, not also the older-extraction notice
    assert f"it lacks migration {last} and 1 more" in done.stderr
    assert f"run `traceladder reindex --db {db}` to upgrade it" in done.stderr
    assert db.read_bytes() == before  # the reader wrote nothing


def test_the_command_it_names_upgrades_the_store(tmp_path):
    db = tmp_path / "old.duckdb"
    _older_store(db, missing=1)
    assert cli("reindex", "--db", str(db)).returncode == 0
    done = cli("sql", "--db", str(db), "SELECT name FROM schema_migrations ORDER BY name DESC LIMIT 1")
    assert done.returncode == 0 and "older traceladder" not in done.stderr
    assert MIGRATIONS[-1][0] in done.stdout


def test_a_current_store_says_nothing(tmp_path):
    db = tmp_path / "new.duckdb"
    _older_store(db, missing=1)
    cli("reindex", "--db", str(db))
    assert "older traceladder" not in cli("sql", "--db", str(db), "SELECT 1").stderr
