"""docs/scale.md runs as written: its bash blocks in order, in one shell, from a checkout's root
(the Dask scheduler on a free port instead of 8786). Blocks that need a ClickHouse server or a
Collector binary are marked `# not run in tests:` with the reason; the Collector configs must at
least be consistent YAML (every pipeline names components that are defined)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from conftest import ROOT, cli
from doc_pages import blocks as doc_blocks
from doc_pages import free_port
from forked_pages import run_page
from scale_helpers import results

DOC = ROOT / "docs" / "scale.md"
NOT_RUN = "# not run in tests: "


def uncached(db: Path) -> dict[str, list[tuple]]:
    """`results`, with rung 5's "(cached)" note removed: whether a judgment came from this store's
    cache says where it was asked first, not what was judged."""
    scrub = lambda v: v.replace(" (cached)", "") if isinstance(v, str) else v  # noqa: E731
    return {table: [tuple(map(scrub, row)) for row in rows] for table, rows in results(db).items()}


def blocks(lang: str) -> list[str]:
    return doc_blocks(DOC, lang)


def test_blocks_not_run_say_why_and_the_collector_configs_are_consistent() -> None:
    skipped = blocks("sh") + blocks("yaml")
    assert len(skipped) >= 4
    for block in skipped:
        first = block.splitlines()[0]
        assert first.startswith(NOT_RUN) and len(first) > len(NOT_RUN) + 10, first
    configs = [yaml.safe_load(b) for b in blocks("yaml")]
    for config in configs:
        for pipeline in config["service"]["pipelines"].values():
            for kind in ("receivers", "processors", "exporters"):
                assert set(pipeline.get(kind, [])) <= set(config.get(kind, {})), (kind, pipeline)
    assert configs[0]["exporters"]["loadbalancing"]["routing_key"] == "traceID"
    assert "tail_sampling" in configs[1]["service"]["pipelines"]["traces"]["processors"]


def test_the_page_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    done = run_page(DOC, tmp_path, ("8786", free_port()))
    stdout = done.stdout
    assert done.returncode == 0, done.stderr
    # parquet in process (the default judge; a judge named), parquet on the scheduler, chdb: each all 18
    assert len(re.findall(r"^evaluated=18 spans=\d+ ", stdout, re.M)) == 4, stdout
    assert re.search(r"judge: calls=[1-9]\d* cache_hits=0 ", done.stderr), done.stderr
    assert re.search(r"│ judged +│ +[1-9]\d* +│", stdout), stdout
    assert re.search(r"^rows \d+$", stdout, re.M)
    # the in-store reference: the traces `run` stored, judged where they are — with the default
    # judge, sim:judge (their runs were simulated), which every source gets too
    done = cli("evaluate", "--db", str(tmp_path / "spans.duckdb"), timeout=120)
    assert done.returncode == 0 and "judge: calls=" in done.stderr, done.stderr
    suite = uncached(tmp_path / "spans.duckdb")
    assert uncached(tmp_path / "results.duckdb") == suite
    assert uncached(tmp_path / "results-ch.duckdb") == suite
