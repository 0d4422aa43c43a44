"""Shared fixtures and helpers of the test suite.

Tests are grouped by component (agent/, cases/, cli/, conventions/, docs/, evaluation/,
evaluators/, ingest/, judge/, live/, project/, reporting/, scale/, serve/, storage/, workflows/);
the adversarial suites are in threats/. Helpers shared across folders live here at the top:
this rootdir conftest puts tests/ on sys.path (no __init__.py anywhere), so `from conftest import
cli`, `import otlp_workload` and `from tests.conftest import cli` work from every folder — which
is also why every test module's name must be unique across the folders.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pytest
from forked_cli import run_cli  # noqa: E402  (tests/ is on sys.path, see above)
from inprocess_cli import run_in_process
from shared_suites import shared_suite

from traceladder.suite.domain.retail.domain import load_retail_domain

ROOT = Path(__file__).resolve().parents[1]


def as_foreground() -> None:
    """`preexec_fn` for a child a test will Ctrl-C: SIGINT at its default and unblocked, as a
    terminal starts a foreground command. A child inherits an ignored or blocked SIGINT from its
    parent, and a pytest worker may carry one (the multiprocessing machinery blocks SIGINT around
    its helper processes, a shell ignores it for background jobs): the child's Ctrl-C would then
    be lost and the test fail for a reason outside the code under test."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


@pytest.fixture(scope="session")
def retail():
    return load_retail_domain()


@pytest.fixture
def sandbox(retail):
    return retail.new_sandbox()


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout=300):
    """Run the real `traceladder` console entry point (`python -m traceladder ARGS`) in a process
    of its own, output captured as text; forked from a pre-imported interpreter when it can be
    (tests/forked_cli.py: the same command, without paying the imports on every call)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("OPENAI_API_KEY", None) if env is None or "OPENAI_API_KEY" not in env else None
    return run_cli(args, full_env, cwd or ROOT, timeout)


def cli_in_process(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    """`cli()` for tests whose subject is not the command line: `main(argv)` in this process
    (tests/inprocess_cli.py), same environment rule, same result type, ~0.05 s instead of a fork."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("OPENAI_API_KEY", None) if env is None or "OPENAI_API_KEY" not in env else None
    return run_in_process(args, full_env, cwd or ROOT)


def body(outcome):
    return json.loads(json.dumps(outcome.result))


def judge_case(case, calls, domain, *, agent_error=None, ladder=None):
    """One trace of one case through the real ladder, as the evaluation layer assembles it."""
    from traceladder.evaluate.rungs.inputs import DomainRules, TraceInputs
    from traceladder.evaluate.rungs.ladder import Ladder
    from traceladder.evaluate.rungs.schema import SchemaRegistry

    inputs = TraceInputs(
        "0" * 32, tuple(calls), case, SchemaRegistry(domain.tool_schemas, f"domain:{domain.name}"),
        DomainRules.of(domain), agent_error=agent_error,
    )  # fmt: skip
    return (ladder or Ladder()).settle(inputs)


def rows(db: Path, sql: str, params: list | tuple | None = None) -> list[tuple]:
    """Query a store file read-only (no folding, no migration: exactly what is on disk)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def out_values(result) -> dict[str, str]:
    """Every `key=value` line a command printed on stdout (`run_id`, `report_path`, …)."""
    return dict(line.split("=", 1) for line in result.stdout.splitlines() if re.match(r"^[a-z_]+=", line))


def out_value(result, key: str) -> str:
    """The value of the first `key=value` line a command printed on stdout."""
    return next(line.split("=", 1)[1] for line in result.stdout.splitlines() if line.startswith(f"{key}="))


# Full simulated suites that several test modules only read, built once per test session and
# shared by every pytest-xdist worker (tests/shared_suites.py: the first worker that needs one runs
# it under a file lock, the others wait and read the same store). DuckDB lets several processes
# open one file read-only, which is all these tests do; a test that writes copies the file first,
# and the fixture checks at the end that nobody wrote to it.
@pytest.fixture(scope="session")
def oracle_suite(tmp_path_factory):
    """The whole suite run by sim:oracle, evaluated, with its report: (store, `run`'s result)."""
    yield from shared_suite(tmp_path_factory, "oracle", "--model", "sim:oracle")


@pytest.fixture(scope="session")
def faulty_suite(tmp_path_factory):
    """The default full run (sim:faulty, seed 0), evaluated, with its report: (store, `run`'s result)."""
    yield from shared_suite(tmp_path_factory, "faulty", "--seed", "0")


# OTLP decoding tests (test_otlp_decode.py, test_otlp_rejections.py)
@pytest.fixture(scope="module")
def con():
    import duckdb

    return duckdb.connect()


@pytest.fixture(scope="module")
def sdk_bodies() -> list[bytes]:
    import otlp_workload

    spans = otlp_workload.make_spans(300, seed=7) + otlp_workload.make_spans(200, structured=True, seed=8)
    return otlp_workload.encode_requests(spans, batch=128)


@pytest.fixture(scope="session")
def scale_data(tmp_path_factory, faulty_suite):
    """The scale tests' dataset (tests/scale_helpers.py): a 72-case run (a copy of `faulty_suite`'s),
    the producer captures, their in-store results and a 4-shard Parquet export, built once per
    session and only read."""
    from scale_helpers import dataset, files_digest

    root, built = dataset(tmp_path_factory, faulty_suite[0])
    yield root
    assert files_digest(root) == built, f"a test wrote to the shared scale dataset {root}"
