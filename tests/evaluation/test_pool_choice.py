"""The default choice between one process and a worker pool (decision 712): an evaluation too small
for the workers' start-up to pay runs in this process whatever the free cores; a large one gets a
worker per free core, at most 4. The choice is tested, not its timing."""

from __future__ import annotations

from traceladder.evaluate.assemble import build_context
from traceladder.evaluate.pool import POOL_MIN_TRACES, SettlePool, pool_size
from traceladder.evaluate.rungs.ladder import Ladder


def test_a_small_evaluation_runs_in_one_process_on_free_cores():
    assert pool_size(2, 20_000) == 1  # one batch on 2 free cores: measured slower on the pool
    assert pool_size(4, POOL_MIN_TRACES - 1) == 1


def test_a_large_evaluation_gets_a_worker_per_free_core():
    assert pool_size(2, POOL_MIN_TRACES) == 2
    assert pool_size(2, 1_000_000) == 2
    assert pool_size(8, 1_000_000) == 4  # at most 4
    assert pool_size(1, 1_000_000) == 1  # no free core beyond this one: no pool
    assert pool_size(2, None) == 2  # an unknown size is not a small one


def test_the_pool_takes_the_choice_and_an_explicit_size_overrides_it():
    ctx = build_context((), Ladder())
    assert SettlePool(ctx, traces=20_000).workers == 1
    assert SettlePool(ctx, workers=2, traces=20_000).workers == 2  # asked for: kept
