"""The exit-code contract under bad input (issue 9, points 9 and 12), table-driven.

Every row runs a real command against a real bad input and asserts the documented exit code,
exactly one line on stderr (progress lines aside) and no traceback. docs/cli.md states the
contract these rows enforce.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT, cli, cli_in_process
from tests.peak_rss import run_measuring_peak
from traceladder.suite.domain.retail.domain import RETAIL_DATA_FILES, read_data_files

DEEP = "[" * 100_000 + "]" * 100_000  # json.loads raises RecursionError on this


@pytest.fixture(scope="module")
def good_store(tmp_path_factory):
    """Two complete, evaluated 2-case runs."""
    db = tmp_path_factory.mktemp("good") / "g.duckdb"
    for seed in ("0", "1"):
        result = cli_in_process("run", "--db", str(db), "--model", "sim:faulty", "--seed", seed, "--case", "fc-d1-001",
                     "--case", "fc-d4-001", "--no-report")  # fmt: skip
        assert result.returncode == 0, result.stderr
    assert cli_in_process("evaluate", "--db", str(db)).returncode == 0
    return db


@dataclass(frozen=True)
class Bad:
    """One bad input: `setup(tmp, good_db)` returns (argv, extra env, cleanup)."""

    name: str
    setup: Callable[[Path, Path], tuple[list[str], dict[str, str]]]
    message: str  # a fragment the one line must contain (case-insensitive)
    code: int = 2
    listing: bool = False  # a validator: lists every violation, then one summary line


def _copy(good: Path, tmp: Path, name: str = "s.duckdb") -> Path:
    target = tmp / name
    shutil.copy(good, target)
    return target


def _corrupt(good: Path, tmp: Path) -> Path:
    db = _copy(good, tmp)
    data = bytearray(db.read_bytes())
    for offset in range(len(data) // 5, len(data) * 4 // 5, 97):  # the blocks, not the header
        data[offset] ^= 0x5A
    db.write_bytes(bytes(data))
    return db


def _runs(db: Path) -> list[str]:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as conn:
        return [r[0] for r in conn.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]


def _baseline_file(tmp: Path, text: str | None) -> Path:
    if text is None:
        path = tmp / "baseline-dir"
        path.mkdir()
        return path
    path = tmp / "baseline.json"
    path.write_text(text)
    return path


def _deleted_migration(good: Path, tmp: Path) -> Path:
    import duckdb

    db = _copy(good, tmp)
    with duckdb.connect(str(db)) as conn:
        conn.execute("DELETE FROM schema_migrations WHERE name = '003_query_views'")
    return db


def _nested_data_dir(tmp: Path) -> Path:
    folder = tmp / "data"
    folder.mkdir()
    for name, data in read_data_files().items():
        (folder / name).write_bytes(data)
    (folder / "tools.json").write_text(DEEP)
    assert set(RETAIL_DATA_FILES) <= {p.name for p in folder.iterdir()}
    return folder


def _nested_cases(tmp: Path) -> Path:
    path = tmp / "cases.jsonl"
    path.write_text(DEEP + "\n")
    return path


BAD: list[Bad] = [
    # a store that cannot be read
    *[
        Bad(
            f"corrupt store: {' '.join(argv)}",
            lambda tmp, good, argv=argv: ([*argv, "--db", str(_corrupt(good, tmp))], {}),
            "store",
        )  # fmt: skip
        for argv in (
            ["report"],
            ["gate", "--min-pass-rate", "0.5"],
            ["evaluate"],
            ["sql", "SELECT * FROM spans"],
            ["run", "--case", "fc-d1-001", "--no-report"],
        )  # fmt: skip
    ],
    Bad("store is a directory", lambda tmp, good: (["report", "--db", str(tmp)], {}), "is a directory"),
    Bad(
        "deleted migration row",
        lambda tmp, good: (["evaluate", "--db", str(_deleted_migration(good, tmp))], {}),
        "damaged",
    ),  # fmt: skip
    # baselines
    *[
        Bad(
            f"baseline {label}: {' '.join(argv)}",
            lambda tmp, good, argv=argv, text=text: (
                [
                    *argv[:-1],
                    str(_baseline_file(tmp, text)),
                    *(["--db", str(good)] if argv[0] == "gate" else []),
                ],
                {},
            ),
            fragment,
        )  # fmt: skip
        for label, text, fragment in (
            ("that is a directory", None, "is a directory"),
            ("that is a JSON array", "[1, 2, 3]", "must hold a JSON object"),
            ("nested too deeply", DEEP, "nested too deeply"),
            ("that is not JSON", "{not json", "is not JSON"),
            ("without its fields", '{"schema": "BaselineV1", "run_id": "x"}', "not a valid BaselineV1"),
            (
                "with wrong types",
                json.dumps({"schema": "BaselineV1", "summary": [], "cases": "x"}),
                "not a valid BaselineV1",
            ),
        )
        for argv in (["gate", "--baseline", "B"], ["baseline", "show", "B"], ["baseline", "check", "B"])
    ],
    # output files
    Bad(
        "report --output a directory",
        lambda tmp, good: (["report", "--db", str(good), "--output", str(tmp)], {}),
        "is a directory",
    ),  # fmt: skip
    Bad(
        "report --output /dev/full",
        lambda tmp, good: (["report", "--db", str(good), "--output", "/dev/full"], {}),
        "No space left",
    ),  # fmt: skip
    Bad(
        "gate --junit a directory",
        lambda tmp, good: (["gate", "--db", str(good), "--min-pass-rate", "0", "--junit", str(tmp)], {}),
        "is a directory",
    ),  # fmt: skip
    Bad(
        "gate --junit /dev/full",
        lambda tmp, good: (["gate", "--db", str(good), "--min-pass-rate", "0", "--junit", "/dev/full"], {}),
        "No space left",
    ),  # fmt: skip
    Bad(
        "$GITHUB_STEP_SUMMARY in a missing folder",
        lambda tmp, good: (
            ["gate", "--db", str(good), "--min-pass-rate", "0"],
            {"GITHUB_STEP_SUMMARY": str(tmp / "no" / "s.md")},
        ),
        "GITHUB_STEP_SUMMARY",
    ),  # fmt: skip
    Bad(
        "$GITHUB_STEP_SUMMARY is a directory",
        lambda tmp, good: (
            ["gate", "--db", str(good), "--min-pass-rate", "0"],
            {"GITHUB_STEP_SUMMARY": str(tmp)},
        ),
        "GITHUB_STEP_SUMMARY",
    ),  # fmt: skip
    Bad(
        "$GITHUB_STEP_SUMMARY on a full device",
        lambda tmp, good: (
            ["gate", "--db", str(good), "--min-pass-rate", "0"],
            {"GITHUB_STEP_SUMMARY": "/dev/full"},
        ),
        "No space left",
    ),  # fmt: skip
    Bad(
        "consistency --output /dev/full",
        lambda tmp, good: (["consistency", *_runs(good), "--db", str(good), "--output", "/dev/full"], {}),
        "No space left",
    ),  # fmt: skip
    Bad(
        "review-template --output a directory",
        lambda tmp, good: (
            ["baseline", "review-template", _runs(good)[0], "--db", str(good), "--output", str(tmp)],
            {},
        ),
        "is a directory",
    ),  # fmt: skip
    # nested input files
    Bad(
        "cases file nested too deeply",
        lambda tmp, good: (["cases", "validate", str(_nested_cases(tmp))], {}),
        "nested too deeply",
        listing=True,
    ),  # fmt: skip
    Bad(
        "run --cases nested too deeply",
        lambda tmp, good: (["run", "--db", str(tmp / "n.duckdb"), "--cases", str(_nested_cases(tmp))], {}),
        "nested too deeply",
    ),  # fmt: skip
    Bad(
        "tools file nested too deeply",
        lambda tmp, good: (["domain", "validate", "--data-dir", str(_nested_data_dir(tmp))], {}),
        "nested too deeply",
        listing=True,
    ),  # fmt: skip
    # flags (point 12)
    *[
        Bad(
            f"run {' '.join(flags)}",
            lambda tmp, good, flags=flags: (["run", "--db", str(tmp / "f.duckdb"), *flags], {}),
            fragment,
        )
        for flags, fragment in (
            (["--timeout", "0"], "--timeout"),
            (["--timeout", "-5"], "--timeout"),
            (["--timeout", "nan"], "--timeout"),
            (["--retry-base-delay", "-1"], "--retry-base-delay"),
            (["--retry-base-delay", "nan"], "--retry-base-delay"),
            (["--repeat", "1000000000"], "--repeat"),
            (["--repeat", "1e9"], "--repeat"),
            (["--concurrency", "0"], "--concurrency"),
            (["--max-steps", "0"], "--max-steps"),
            (["--max-tokens", "0"], "--max-tokens"),
            (["--model", "m", "--base-url", "not a url"], "--base-url"),
            (["--model", "m", "--base-url", "ftp://host/v1"], "--base-url"),
            (["--resume", ""], "run id cannot be empty"),
        )
    ],
    Bad("selfcheck --seeds 1,,2", lambda tmp, good: (["selfcheck", "--seeds", "1,,2"], {}), "--seeds"),
    Bad("selfcheck --seeds 1,1", lambda tmp, good: (["selfcheck", "--seeds", "1,1"], {}), "twice"),
    Bad(
        "gate --run ''",
        lambda tmp, good: (["gate", "--db", str(good), "--run", "", "--min-pass-rate", "0"], {}),
        "run id cannot be empty",
    ),  # fmt: skip
    Bad("report ''", lambda tmp, good: (["report", "", "--db", str(good)], {}), "run id cannot be empty"),
    Bad(
        "sql with two statements",
        lambda tmp, good: (["sql", "SELECT 1; SELECT 2", "--db", str(good)], {}),
        "one statement",
    ),
]


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[None]:
    """A folder nothing can be created in — as root too (chattr +i), where chmod would not stop us."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)


def assert_contract(
    result: subprocess.CompletedProcess[str], code: int, message: str, *, listing: bool = False
) -> None:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if not re.match(r"^\[\d+/\d+\] ", line)]
    if listing:  # every violation on its own line, then `…_validation=failed (N …)`
        assert message.lower() in result.stderr.lower() and re.match(r"^\w+_validation=failed", lines[-1])
        return
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("traceladder: ") and message.lower() in lines[0].lower(), lines[0]


@pytest.mark.parametrize("bad", BAD, ids=[b.name for b in BAD])
def test_bad_input_gets_one_line_and_the_documented_exit(bad, good_store, tmp_path):
    argv, env = bad.setup(tmp_path, good_store)
    assert_contract(cli(*argv, env=env), bad.code, bad.message, listing=bad.listing)


def test_a_store_in_a_folder_nothing_can_be_written_to(good_store, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = _copy(good_store, folder)
    with read_only_folder(folder):
        for argv in (["evaluate"], ["run", "--case", "fc-d1-001", "--no-report"]):
            assert_contract(cli(*argv, "--db", str(db)), 2, "store")
        readable = cli("report", "--db", str(db))  # reading needs no write
        assert readable.returncode == 0, readable.stderr


def test_a_huge_sql_result_streams_in_bounded_memory(good_store, tmp_path):
    """200 MB of result text goes out in chunks: every row arrives and the process never holds the
    result (its peak resident set, ~120 MB streaming here, stays below the result's own size; held,
    the result alone would be 200 MB on top of the interpreter's ~90). 200 MB, not 600: the bound
    separates the two as clearly, at a third of the rows to produce and write.

    Not tested under an address-space cap (`prlimit --as`): once the cap is reached, whichever thread
    first touches a shared library's thread-local storage makes glibc abort the process (exit 127,
    "cannot allocate memory for thread-local data") — at random, before Python can say anything.
    """
    sql = "SELECT repeat('x', 2000) || i::VARCHAR AS v FROM range(100000) t(i)"
    out, err = tmp_path / "rows.csv", tmp_path / "stderr.txt"
    with out.open("wb") as sink, err.open("wb") as errors:
        child = run_measuring_peak(
            [sys.executable, "-m", "traceladder", "sql", sql, "--csv", "--db", str(good_store)],
            peak_file=tmp_path / "peak", cwd=ROOT, stdout=sink, stderr=errors,
        )  # fmt: skip
    assert child.returncode == 0, err.read_text()
    with out.open("rb") as rows:
        assert sum(1 for _ in rows) == 100_001
    peak_mb = child.peak_mb
    assert peak_mb < 200, f"peak resident set {peak_mb:.0f} MB for a 200 MB result: it was held, not streamed"
