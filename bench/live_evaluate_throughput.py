"""Open-path evaluation throughput (issue 12): rung 1 against each trace's own captured tool
definitions plus the invariant checks of a policy, end to end (read + judge + write), next to the
offline ladder's figure on the same traces with a case (all rungs) — both measured in this run —
and `watch`'s rate (due query + judge + write + watermark, per batch) for comparison with what
`serve` ingests.

    python bench/live_evaluate_throughput.py [--traces 100000] [--smoke] [--json]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate_throughput import report_stages, stages, synthesize  # noqa: E402 - a sibling script
from measures import add_options, measure, reporting  # noqa: E402 - bench/measures.py

from traceladder.evaluate import evaluate_store  # noqa: E402
from traceladder.evaluate.assemble import LiveOptions  # noqa: E402
from traceladder.evaluate.policy_file import load_policy  # noqa: E402
from traceladder.extract.version import EXTRACTION_VERSION, conventions_stamp  # noqa: E402
from traceladder.store import Store  # noqa: E402
from traceladder.store.derived import (
    TRACE_FACT_SCHEMA,  # noqa: E402
    Stamp,  # noqa: E402
)
from traceladder.store.trace_index import index_traces  # noqa: E402
from traceladder.suite.domain.retail import load_retail_domain  # noqa: E402
from traceladder.workflows.watch import WatchOptions, judge_due  # noqa: E402

POLICY = """
[defaults]
forbidden_tools = ["delete_*"]
max_tool_calls = 12
forbid_duplicate_calls = true
max_tool_errors = 2
max_latency_ms = 30000

[[defaults.confirm]]
tool = "request_*"
by = ["confirm_action", "abort_action"]

[defaults.parameters]
"*.order_id" = 'W\\d{3}'
"*.user_id" = 'U\\d{3}'
"""


def make_live(store: Store) -> None:
    """Turn the synthesised suite traces into live ones: no case, a service and version, and the
    domain's tool definitions captured on every trace (as instrumentations record them)."""
    domain = load_retail_domain()
    import json

    defs = pa.table(
        {
            "name": list(domain.tool_schemas),
            "parameters": [json.dumps(s) for s in domain.tool_schemas.values()],
        }
    )
    with store.transaction() as conn:
        conn.execute(
            """UPDATE spans SET attributes = '{"gen_ai.operation.name": "invoke_agent"}',
               resource = '{"service.name": "retail-agent", "service.version": "1.0"}'"""
        )
        conn.register("defs", defs)
        conn.execute(
            "INSERT INTO tool_definitions (trace_id, name, parameters, convention) "
            "SELECT s.trace_id, d.name, d.parameters, 'otel_genai' FROM spans s, defs d"
        )
        conn.unregister("defs")
        conn.register("affected_traces", conn.sql("SELECT DISTINCT trace_id FROM spans").to_arrow_table())
        conn.register(
            "derived_facts",
            TRACE_FACT_SCHEMA.empty_table(),
        )
        index_traces(
            conn,
            datetime.now(UTC) - timedelta(minutes=5),
            stamp=Stamp(EXTRACTION_VERSION, conventions_stamp("")),
        )
        conn.unregister("derived_facts")
        conn.unregister("affected_traces")


def timed(label: str, n: int, fn) -> float:
    start = time.perf_counter()
    fn()
    rate = n / (time.perf_counter() - start)
    print(f"{label}_traces_per_s={rate:,.0f}")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=100_000)
    add_options(parser)
    args = parser.parse_args()
    if args.smoke:
        args.traces = 300
    with reporting(args):
        run(args.traces)


def run(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        policy_path = Path(tmp) / "policy.toml"
        policy_path.write_text(POLICY)
        live = LiveOptions(policies=load_policy(policy_path))
        with Store(Path(tmp) / "offline.duckdb") as store:
            synthesize(store, n)
            offline = timed("offline_ladder", n, lambda: evaluate_store(store))
        db = Path(tmp) / "live.duckdb"
        with Store(db) as store:
            synthesize(store, n)
            make_live(store)
            one = timed("open_path_one_process", n, lambda: evaluate_store(store, live=live, workers=1))
            pooled = timed("open_path_default_pool", n, lambda: evaluate_store(store, live=live))
            verdicts = dict(store.fetchall("SELECT verdict, count(*) FROM trace_results GROUP BY 1"))
            classes = store.fetchall(
                "SELECT failure_class, count(*) FROM trace_results GROUP BY 1 ORDER BY 2 DESC LIMIT 5"
            )
            print(f"open_path_verdicts={verdicts} top_classes={classes}")
            report_stages(stages(store, live), "open path")
            store.execute("DELETE FROM trace_results")
        options = WatchOptions(settle_s=0, batch=5_000, live=live)

        def drain() -> None:
            while judge_due(db, options) is not None:
                pass

        watch_rate = timed("watch_batches_of_5000", n, drain)
        best = max(one, pooled)
        print(f"open_path_vs_offline_ladder={best / offline:.2f}x goal=20,000 traces/s met={best >= 20_000}")
        print(f"watch_vs_open_path_evaluate={watch_rate / best:.2f}x")
        measure("open path (rung 1 + policy), one process", one, "traces/s",
                baseline=offline, baseline_name="offline ladder, default pool")  # fmt: skip
        measure("open path (rung 1 + policy), default pool", pooled, "traces/s",
                baseline=offline, baseline_name="offline ladder, default pool")  # fmt: skip
        measure("watch, batches of 5000", watch_rate, "traces/s",
                baseline=best, baseline_name="open-path evaluate")  # fmt: skip


if __name__ == "__main__":
    main()
