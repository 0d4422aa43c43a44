"""Suite wall time: the 72-case suite on sim:oracle, end to end (run only, no evaluation).

Prints the wall time of `run_suite` on a fresh store, and of one in-process no-op baseline
(loading cases + domain) for scale.

    python bench/suite_walltime.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from traceladder.agent.client import choose_model
from traceladder.agent.config import AgentConfig
from traceladder.agent.runner import RunOptions, run_suite
from traceladder.domain.retail import load_retail_domain
from traceladder.storage import Store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    domain = load_retail_domain()
    choice = choose_model("sim:oracle", None)
    times = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "s.duckdb") as store:
            start = time.perf_counter()
            summary = run_suite(
                store,
                choice,
                AgentConfig(model=choice.model),
                RunOptions(concurrency=args.concurrency),
                domain=domain,
            )
            times.append(time.perf_counter() - start)
            assert summary.finished == 72
    print(f"cases=72 concurrency={args.concurrency} runs={args.repeat}")
    print(
        f"suite_wall_s min={min(times):.2f} median={sorted(times)[len(times) // 2]:.2f} max={max(times):.2f}"
    )


if __name__ == "__main__":
    main()
