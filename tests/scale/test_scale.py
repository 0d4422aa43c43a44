"""Beyond one machine (issue 15): span sources and sharded evaluation give exactly the results of
the in-store `evaluate`, row for row — Parquet in one process, any shard count, on a real Dask
LocalCluster (127.0.0.1 only), and when a worker is SIGKILLed mid-shard."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import cloudpickle
import duckdb
import psutil
import pyarrow as pa
import pytest
from conftest import cli
from scale_helpers import assert_same_results, counts, no_judge, results

from traceladder.errors import UserError
from traceladder.evaluate.executors import DaskExecutor, InProcess
from traceladder.evaluate.shards import ShardJob, evaluate_source
from traceladder.receive.span_sources import open_source
from traceladder.receive.span_sources.parquet import ParquetSource
from traceladder.receive.span_sources.shard import shard_of
from traceladder.receive.span_sources.store import StoreSource


@pytest.fixture(scope="module")
def data(scale_data) -> Path:
    return scale_data


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0", silence_logs=50,
    ) as c:  # fmt: skip
        yield c


def test_the_export_is_hive_partitioned_by_trace(data):
    export = data / "export"
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT trace_id, shard, date FROM read_parquet('{export}/**/*.parquet', hive_partitioning = true) "
        "WHERE source IS DISTINCT FROM 'judge'"
    ).fetchall()
    assert rows and all(shard == shard_of(t, 4) for t, shard, _ in rows)
    dates: dict[str, set] = {}
    for trace_id, _, date in rows:
        dates.setdefault(trace_id, set()).add(date)
    assert len(dates) == 90 and all(len(d) == 1 for d in dates.values())  # a trace never spans days
    assert all(p.name.startswith("part-") for p in export.glob("date=*/shard=*/*.parquet"))
    assert ParquetSource(export).natural_shards() == 4


def test_parquet_source_through_the_cli_judges_like_the_store(data, tmp_path):
    db = tmp_path / "results.duckdb"
    # its spans say their runs were simulated, so like `evaluate` it would judge with sim:judge by
    # default (tests/scale/test_scale_judge.py) — the reference is the code rungs alone
    done = cli("evaluate", "--db", str(db), "--source", f"parquet:{data / 'export'}", *no_judge())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("evaluated=90 spans=")
    assert_same_results(db, data / "store.duckdb")
    done = cli("evaluate", "--db", str(db), "--source", f"parquet:{data / 'export'}", "--run", "nope")
    assert (done.returncode, done.stderr) == (
        2,
        f"traceladder: no traces of run nope in parquet:{data / 'export'}\n",
    )
    assert_same_results(db, data / "store.duckdb")  # nothing was replaced


@pytest.mark.parametrize("shards", [1, 2, 3])  # 2 divides the export's 4 (pruned), 3 does not
def test_any_shard_count_gives_the_same_rows_and_a_rerun_replaces(data, tmp_path, shards):
    db = tmp_path / "r.duckdb"
    source = ParquetSource(data / "export")
    for _ in range(2 if shards == 3 else 1):
        summary, spans = evaluate_source(db, source, InProcess(), ShardJob(source, shards))
        assert summary.units == 90 and spans >= counts(data / "store.duckdb")[0]
        assert_same_results(db, data / "store.duckdb")


def test_the_store_itself_as_a_sharded_source(data, tmp_path):
    db = tmp_path / "copy.duckdb"
    db.write_bytes((data / "store.duckdb").read_bytes())
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM trace_results; DELETE FROM rung_results; DELETE FROM findings")
    con.close()
    # source = the store, results into it; its runs are simulated, so like `evaluate` it would
    # judge with sim:judge by default — the reference is the code rungs alone
    done = cli("evaluate", "--db", str(db), "--shards", "3", *no_judge())
    assert done.returncode == 0, done.stderr
    assert_same_results(db, data / "store.duckdb")
    assert isinstance(open_source(f"duckdb:{db}"), StoreSource)


def test_dask_results_are_identical_and_everything_listens_on_loopback(data, tmp_path, cluster):
    db = tmp_path / "dask.duckdb"
    source = ParquetSource(data / "export")
    executor = DaskExecutor(cluster.scheduler_address)
    try:
        summary, _ = evaluate_source(db, source, executor, ShardJob(source, 4))
        pids = set(executor.client.run(os.getpid).values())
    finally:
        executor.close()
    assert summary.units == 90
    assert_same_results(db, data / "store.duckdb")
    processes = [psutil.Process(), *(psutil.Process(p) for p in pids)]
    processes += [p.parent() for p in processes[1:]]  # the nannies
    listening = {c.laddr.ip for p in processes for c in p.net_connections("inet") if c.status == "LISTEN"}
    assert listening == {"127.0.0.1"}


@dataclass(frozen=True)
class SlowSource:
    """A source of our interface (not a mock: it delegates to the real Parquet source) whose reads
    take long enough that a worker can be killed in the middle of one; it logs every attempt."""

    inner: ParquetSource
    log: Path

    @property
    def name(self) -> str:
        return "slow:" + self.inner.name

    def check(self) -> None:
        self.inner.check()

    def natural_shards(self) -> int | None:
        return None

    def run_models(self, run_id: str | None) -> list[tuple[str, str | None]]:
        return self.inner.run_models(run_id)

    def read_shard(self, shard: int, shards: int) -> pa.Table:
        with self.log.open("a") as f:
            f.write(f"{shard} {os.getpid()}\n")
        time.sleep(1.5)
        return self.inner.read_shard(shard, shards)


def test_a_worker_killed_mid_shard_is_retried_and_nothing_changes(data, tmp_path, cluster):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
    log = tmp_path / "attempts.log"
    source = SlowSource(ParquetSource(data / "export"), log)
    executor = DaskExecutor(cluster.scheduler_address)
    killed: list[tuple[int, int]] = []

    def kill_one() -> None:
        """Once both shards are being read (each read takes 1.5 s), SIGKILL the first reader."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            lines = log.read_text().split("\n")[:-1] if log.exists() else []
            if len(lines) >= 2:
                workers = set(executor.client.run(os.getpid).values())
                shard, pid = next((int(s), int(p)) for s, p in map(str.split, lines) if int(p) in workers)
                os.kill(pid, signal.SIGKILL)
                killed.append((pid, shard))
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_one)
    killer.start()
    try:
        db = tmp_path / "killed.duckdb"
        summary, _ = evaluate_source(db, source, executor, ShardJob(source, 2))
    finally:
        killer.join()
        executor.close()
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert killed, "no worker was killed"
    pid, shard = killed[0]
    attempts = [line.split() for line in log.read_text().splitlines()]
    assert [a for a in attempts if int(a[0]) == shard][-1][1] != str(pid)  # re-run in another process
    assert summary.units == 90
    assert_same_results(db, data / "store.duckdb")
    assert results(db) == results(data / "store.duckdb")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--source", "parquet:/missing"], "parquet source /missing is not a directory"),
        (["--source", "clickhouse://bob:s3cret@127.0.0.1/otel"], "never in the URL"),
        (
            ["--shards", "2", "--dask", "tcp://127.0.0.1:9", "--dask-timeout", "1"],
            "cannot reach the Dask scheduler",
        ),
    ],
)
def test_bad_sources_are_one_line_through_the_cli(tmp_path, args, says):
    done = cli("evaluate", "--db", str(tmp_path / "r.duckdb"), *args)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
    assert "s3cret" not in done.stderr + done.stdout


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("s3://bucket/spans", "unknown --source 's3'"),
        ("parquet:{empty}", "has no .parquet files"),
        ("parquet:{foreign}", "lacks the span columns trace_id, span_id"),
        ("duckdb:{foreign}/a.parquet", "cannot open"),
        (
            "clickhouse://bob@127.0.0.1:9/otel?timeout=1",
            "cannot connect to clickhouse://bob@127.0.0.1:9/otel",
        ),
        ("clickhouse://bob@127.0.0.1/otel?user=x", "unknown parameter 'user'"),
        ("chdb://relative/path", "chdb needs an absolute path"),
    ],
)
def test_bad_sources_are_one_user_error(tmp_path, spec, says):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no spans here")
    (tmp_path / "foreign").mkdir()
    duckdb.execute(f"COPY (SELECT 1 AS x) TO '{tmp_path / 'foreign' / 'a.parquet'}' (FORMAT parquet)")
    spec = spec.replace("{empty}", str(tmp_path / "empty")).replace("{foreign}", str(tmp_path / "foreign"))
    with pytest.raises(UserError) as raised:
        open_source(spec).check()
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_chdb_is_refused_on_dask_in_one_line(tmp_path):
    done = cli(
        "evaluate", "--db", str(tmp_path / "r.duckdb"), "--source", "chdb:///tmp/x", "--dask", "local:1"
    )
    assert (done.returncode, done.stderr.count("\n")) == (
        2,
        1,
    ) and "Dask workers cannot read it" in done.stderr


@pytest.mark.parametrize(
    ("module", "args", "extra"),
    [
        ("distributed", ["--shards", "2", "--dask", "local:1"], "traceladder[dask]"),
        ("clickhouse_connect", ["--source", "clickhouse://h/otel"], "traceladder[clickhouse]"),
    ],
)
def test_a_missing_extra_names_what_to_install(tmp_path, module, args, extra):
    code = (f"import sys; sys.modules[{module!r}] = None\n"  # the import now fails, as when not installed
            "from traceladder.cli.main import main\n"
            f"sys.exit(main(['evaluate', '--db', {str(tmp_path / 'r.duckdb')!r}, *{args!r}]))")  # fmt: skip
    import subprocess

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"traceladder: {'--dask' if module == 'distributed' else 'reading ClickHouse'} needs the optional "
        f"dependency {module!r}: pip install '{extra}'"
    ]
