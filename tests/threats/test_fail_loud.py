"""Fail loud, never stall: a --db that is not a file, a store `watch --once` cannot use, a store
cut short, JSONL split only on "\\n", a strict price table, and `sql --timeout`.

Every command runs through the real CLI in a subprocess with a timeout, so a command that hangs
(DuckDB opening a FIFO waits for a writer forever) fails the test instead of stalling it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT, cli, cli_in_process
from tests.threats.test_bad_inputs import assert_contract

HANG = 120  # seconds: far beyond any of these commands on a loaded machine, far below forever
META = ROOT / "traceladder" / "evaluate" / "judge" / "meta" / "retail_v1.jsonl"
SUITE = ROOT / "traceladder" / "suite" / "domain" / "retail" / "data" / "retail_fc.jsonl"
RECURSIVE = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One complete, evaluated 2-case run."""
    db = tmp_path_factory.mktemp("store") / "s.duckdb"
    result = cli_in_process("run", "--db", str(db), "--model", "sim:faulty", "--case", "fc-d1-001", "--case", "fc-d4-001",
                 "--no-report")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert cli_in_process("evaluate", "--db", str(db)).returncode == 0
    return db


def _copy(store: Path, tmp: Path, name: str = "copy.duckdb") -> Path:
    target = tmp / name
    shutil.copy(store, target)
    return target


def _fifo(tmp: Path) -> Path:
    path = tmp / "pipe.duckdb"
    os.mkfifo(path)
    return path


# -- a --db that is not a regular file ---------------------------------------------------------

COMMANDS = (
    ["sql", "SELECT 1"],
    ["report"],
    ["watch", "--once"],
    ["evaluate"],
    ["gate", "--min-pass-rate", "0"],
    ["run", "--case", "fc-d1-001", "--no-report"],
)


@pytest.mark.parametrize("argv", COMMANDS, ids=[a[0] for a in COMMANDS])
def test_a_fifo_as_db_is_refused_at_once(argv: list[str], tmp_path: Path) -> None:
    result = cli(*argv, "--db", str(_fifo(tmp_path)), timeout=HANG)
    assert_contract(result, 2, "is a named pipe (FIFO), not a store file")


def test_a_socket_a_device_or_a_directory_as_db_is_refused(tmp_path: Path) -> None:
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(sock_path))
        assert_contract(cli("sql", "SELECT 1", "--db", str(sock_path), timeout=HANG), 2, "is a socket")
    assert_contract(cli("report", "--db", "/dev/zero", timeout=HANG), 2, "is a character device")
    assert_contract(cli("watch", "--once", "--db", str(tmp_path), timeout=HANG), 2, "is a directory")


def test_the_default_store_path_is_checked_too(tmp_path: Path) -> None:
    env = {"TRACELADDER_DB": str(_fifo(tmp_path))}
    assert_contract(cli("evaluate", env=env, timeout=HANG), 2, "named pipe")


# -- watch --once on what it cannot use ---------------------------------------------------------


def _text_file(store: Path, tmp: Path) -> Path:
    path = tmp / "notes.duckdb"
    path.write_text("not a database\n")
    return path


def _foreign(store: Path, tmp: Path) -> Path:
    path = tmp / "other.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    return path


def _newer(store: Path, tmp: Path) -> Path:
    path = _copy(store, tmp)
    with duckdb.connect(str(path)) as conn:
        conn.execute("INSERT INTO schema_migrations (name) VALUES ('999_from_the_future')")
    return path


def _cut_to_a_third(store: Path, tmp: Path) -> Path:
    path = _copy(store, tmp)
    os.truncate(path, path.stat().st_size // 3)
    return path


NOT_USABLE = (
    ("a text file", _text_file, "not a valid DuckDB database file"),
    ("another program's database", _foreign, "another program"),
    ("a newer schema", _newer, "newer traceladder"),
    ("a store cut to a third", _cut_to_a_third, "damaged"),
)


@pytest.mark.parametrize(("what", "make", "fragment"), NOT_USABLE, ids=[n[0] for n in NOT_USABLE])
def test_watch_once_on_what_is_not_a_usable_store_exits_2(what, make, fragment, store, tmp_path) -> None:
    result = cli("watch", "--once", "--settle", "0", "--db", str(make(store, tmp_path)), timeout=HANG)
    assert_contract(result, 2, fragment)
    assert "waiting" not in result.stderr


# -- a store cut short ---------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["sql", "SELECT 1"], ["report"]], ids=["sql", "report"])
def test_a_store_cut_to_a_third_is_damaged(argv: list[str], store: Path, tmp_path: Path) -> None:
    assert_contract(cli(*argv, "--db", str(_cut_to_a_third(store, tmp_path)), timeout=HANG), 2, "damaged")


def test_a_store_cut_inside_its_headers_is_damaged(store: Path, tmp_path: Path) -> None:
    path = _copy(store, tmp_path)
    os.truncate(path, 5000)
    assert_contract(cli("sql", "SELECT 1", "--db", str(path), timeout=HANG), 2, "damaged")


def test_a_store_whose_header_counts_freed_blocks_past_its_end_is_healthy(
    store: Path, tmp_path: Path
) -> None:
    """A checkpoint writes the header, then truncates free blocks at the end: the file is then
    shorter than the header's block count, by free blocks only. That store must keep working."""
    path = _copy(store, tmp_path)
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE scratch AS SELECT i, repeat('x', 100) || i AS s FROM range(300000) t(i)")
    conn.execute("CHECKPOINT")
    conn.execute("DROP TABLE scratch")
    conn.execute("CHECKPOINT")
    total, free, block_size = conn.execute(
        "SELECT total_blocks, free_blocks, block_size FROM pragma_database_size()"
    ).fetchone()
    conn.close()
    with path.open("rb") as handle:  # the current database header's block count, as DuckDB wrote it
        head = handle.read(3 * 4096)
    headers = [
        [int.from_bytes(head[o + 8 + 8 * i : o + 16 + 8 * i], "little") for i in range(4)]
        for o in (4096, 8192)
    ]
    counted = max(headers)[3]
    in_file = (path.stat().st_size - 3 * 4096) // block_size
    assert counted > in_file and free > 0, (counted, in_file, total, free)  # the state under test
    result = cli("sql", "SELECT count(*) AS n FROM spans", "--csv", "--db", str(path), timeout=HANG)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] != "0"


# -- JSONL is split on "\n" only ------------------------------------------------------------------


def test_run_loads_a_cases_file_with_a_raw_line_separator(tmp_path: Path) -> None:
    first, rest = SUITE.read_text(encoding="utf-8").split("\n", 1)
    record = json.loads(first)
    record["instruction"] += "\u2028谢谢\u2029\u0085"
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(record, ensure_ascii=False) + "\n" + rest, encoding="utf-8")
    assert "\u2028" in cases.read_text(encoding="utf-8")  # raw, not escaped
    checked = cli("cases", "validate", str(cases), timeout=HANG)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    db = tmp_path / "r.duckdb"
    ran = cli(
        "run", "--db", str(db), "--cases", str(cases), "--case", record["id"], "--no-report", timeout=HANG
    )
    assert ran.returncode == 0, ran.stderr
    assert "cases=1/1" in ran.stdout


def test_the_judge_meta_set_loads_with_a_raw_line_separator(tmp_path: Path) -> None:
    lines = META.read_text(encoding="utf-8").split("\n")
    item = json.loads(lines[0])
    item["trajectory"]["instruction"] += "\u2028"
    meta = tmp_path / "meta.jsonl"
    meta.write_text("\n".join([json.dumps(item, ensure_ascii=False), *lines[1:]]), encoding="utf-8")
    result = cli("selfcheck", "--judge", "--meta", str(meta), "--rounds", "1", timeout=HANG)
    assert result.returncode == 0, result.stderr
    assert f"{len([x for x in lines if x.strip()])} labelled trajectories" in result.stdout


# -- the price table is strict ---------------------------------------------------------------------

PRICES = (
    ("an empty file", "", "no prices"),
    ("a misspelled table", '[model."gpt-4o"]\ninput = 1.0\noutput = 2.0\n', "unknown table or key 'model'"),
    (
        "an unknown key",
        '[models."gpt-4o"]\ninput = 1.0\noutput = 2.0\ncached = 0.5\n',
        "unknown key 'cached'",
    ),
    ("an infinite price", '[models."gpt-4o"]\ninput = inf\noutput = 2.0\n', "`input` = inf"),
    ("a NaN price", '[models."gpt-4o"]\ninput = 1.0\noutput = nan\n', "`output` = nan"),
    ("a negative price", '[models."gpt-4o"]\ninput = -1\noutput = 2.0\n', "`input` = -1"),
    ("a model that is not a table", 'models = { "gpt-4o" = 3 }\n', "must be a table"),
)


@pytest.mark.parametrize(("what", "text", "fragment"), PRICES, ids=[p[0] for p in PRICES])
def test_a_bad_price_table_is_refused(what: str, text: str, fragment: str, tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(text)
    argv = [
        "--judge-model",
        "sim:judge",
        "--judge-prices",
        str(prices),
        "--db",
        str(tmp_path / "none.duckdb"),
    ]
    assert_contract(cli("watch", "--once", *argv, timeout=HANG), 2, fragment)


def test_evaluate_refuses_a_bad_price_table(store: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."gpt-4o"]\ninput = inf\noutput = 2.0\n')
    result = cli("evaluate", "--db", str(_copy(store, tmp_path)), "--judge-model", "sim:judge",
                 "--judge-prices", str(prices), timeout=HANG)  # fmt: skip
    assert_contract(result, 2, str(prices))


def test_a_good_price_table_prices_the_judge(store: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."sim:judge"]\ninput = 1\noutput = 2.5\n')
    result = cli("evaluate", "--db", str(_copy(store, tmp_path)), "--judge-model", "sim:judge",
                 "--judge-prices", str(prices), "--no-cache", timeout=HANG)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "cost_usd=0.0000" not in result.stderr and "cost_usd=" in result.stderr


# -- sql --timeout -----------------------------------------------------------------------------------


def test_sql_stops_a_query_that_never_ends(store: Path) -> None:
    try:
        result = cli("sql", RECURSIVE, "--timeout", "1", "--db", str(store), timeout=HANG)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`sql --timeout 1` still running after {HANG} s")
    assert_contract(result, 2, "query interrupted after 1 s (--timeout)")


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_sql_timeout_must_be_a_positive_number(value: str, store: Path) -> None:
    result = cli("sql", "SELECT 1", "--timeout", value, "--db", str(store), timeout=HANG)
    assert_contract(result, 2, "must be a finite number of seconds")


def test_sql_within_its_timeout_answers(store: Path) -> None:
    result = cli(
        "sql", "SELECT count(*) FROM spans", "--csv", "--timeout", "60", "--db", str(store), timeout=HANG
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.splitlines()[1]) > 0
