"""Suite wall time: the 72-case suite on sim:oracle, end to end (run only, no evaluation).

Prints the wall time of `run_suite` on a fresh store, and of the in-process no-op baseline measured
in the same run for scale: what every run pays before its first case (loading the cases and the
domain, opening a fresh store with its migrations), as a share of the whole.

    python bench/suite_walltime.py [--repeat 3] [--concurrency 4] [--smoke] [--json]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from measures import add_options, measure, reporting  # bench/measures.py

from traceladder.produce.agent.client import choose_model
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.runner import RunOptions, run_suite
from traceladder.store import Store
from traceladder.suite.cases import load_cases
from traceladder.suite.domain.retail import load_retail_domain

SMOKE_CASES = ("fc-d4-001",)


def no_op(tmp: Path) -> float:
    """Seconds of what a run does before its first case: cases, domain, a fresh store."""
    start = time.perf_counter()
    load_cases()
    load_retail_domain()
    with Store(tmp / "no-op.duckdb"):
        pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    add_options(parser)
    args = parser.parse_args()
    case_ids: tuple[str, ...] = ()
    if args.smoke:
        args.repeat, case_ids = 1, SMOKE_CASES
    with reporting(args):
        run(args, case_ids)


def run(args: argparse.Namespace, case_ids: tuple[str, ...]) -> None:
    domain = load_retail_domain()
    choice = choose_model("sim:oracle", None)
    expected = len(case_ids) or len(load_cases())
    times, baselines = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            baselines.append(no_op(Path(tmp)))
            with Store(Path(tmp) / "s.duckdb") as store:
                start = time.perf_counter()
                summary = run_suite(
                    store,
                    choice,
                    AgentConfig(model=choice.model),
                    RunOptions(case_ids=case_ids, concurrency=args.concurrency),
                    domain=domain,
                )
                times.append(time.perf_counter() - start)
            assert summary.finished == expected, summary
    print(f"cases={expected} concurrency={args.concurrency} runs={args.repeat}")
    print(f"suite_wall_s min={min(times):.2f} median={statistics.median(times):.2f} max={max(times):.2f}")
    print(f"no_op_baseline_s (cases + domain + fresh store) median={statistics.median(baselines):.3f}")
    measure(
        f"suite wall on sim:oracle, {expected} case(s)",
        statistics.median(times),
        "s",
        baseline=statistics.median(baselines),
        baseline_name="no-op: cases + domain + fresh store",
    )


if __name__ == "__main__":
    main()
