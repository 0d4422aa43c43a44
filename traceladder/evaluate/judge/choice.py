"""Which judge a workflow asks for, as a typed request, and the `JudgeOptions` it resolves to.

A workflow whose default judge depends on what it learns first (a run's model: `sim:judge` for a
simulated one) takes a `JudgeRequest` and resolves it once it knows; the CLI only fills the
request from its flags (`cli/judge_options.py`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from traceladder.endpoints.resolve import JUDGE, chosen_model, resolve
from traceladder.errors import UserError
from traceladder.evaluate.judge.endpoint import JudgeEndpoint
from traceladder.evaluate.judge.phase import JudgeBudget, JudgeOptions
from traceladder.evaluate.judge.prices import load_prices
from traceladder.evaluate.judge.rubric import load_rubric


@dataclass(frozen=True)
class JudgeRequest:
    """The judge flags: `model` None means the environment's or the default; `off` is --no-judge."""

    model: str | None = None
    base_url: str | None = None
    rubric: Path | None = None
    prices: Path | None = None
    budget: JudgeBudget | None = None
    cache: bool = True
    concurrency: int = 4
    off: bool = False


def resolve_judge(
    request: JudgeRequest, *, simulated: bool, env: Mapping[str, str] | None = None
) -> JudgeOptions | None:
    """The judge `request` names, else `TRACELADDER_JUDGE_MODEL`, else `sim:judge` when
    `simulated` (every trace judged is a simulated-model run's), else None (no rung 5).
    `UserError` for an unknown simulated judge or a concurrency below 1."""
    from traceladder.evaluate.judge.sim import SIM_JUDGE, transport

    env = os.environ if env is None else env
    if request.off:
        return None
    model = chosen_model(JUDGE, request.model, env) or (SIM_JUDGE if simulated else None)
    if model is None:
        return None
    if request.concurrency < 1:
        raise UserError("--judge-concurrency must be at least 1")
    if model.startswith("sim:"):
        if model != SIM_JUDGE:
            raise UserError(f"unknown simulated judge {model!r}; use {SIM_JUDGE}")
        endpoint = JudgeEndpoint(model, transport=transport())
    else:
        found = resolve(JUDGE, model, request.base_url, env)  # the agent's rule, the judge's variables
        endpoint = JudgeEndpoint(model, found.url, found.api_key, key_source=found.key_source)
    return JudgeOptions(
        endpoint,
        load_rubric(request.rubric),
        load_prices(request.prices),
        request.budget or JudgeBudget(),
        request.cache,
        request.concurrency,
    )


def simulated_runs(run_models: Iterable[tuple[str, str | None]]) -> bool:
    """Whether the runs judged all used a simulated model: `run_models` is (run id, model) as the
    spans record them (`store.readers.read_run_models`, `SpanSource.run_models`); no run, no."""
    models = [model for _, model in run_models]
    return bool(models) and all(model is not None and model.startswith("sim:") for model in models)
