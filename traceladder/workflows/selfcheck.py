"""`selfcheck`: the judge's own misjudgment rate, measured against the simulator's labels.

Runs `sim:faulty` over the suite with several seeds (each case gets one injected fault whose
correct verdict and failure class are known), evaluates, and compares. The automated form of
seed 1's human calibration: any disagreement is a judge (or label) bug.

`run_selfcheck(request)` is the command's one call: a `SelfcheckRequest` measures the code rungs
(a temporary store unless the request names one) and returns a `SelfCheck`; a
`JudgeSelfcheckRequest` (`selfcheck --judge`) measures a judge against the labelled set
(workflows/judge_selfcheck.py) and returns its `JudgeSelfcheckResult`. `selfcheck(store, domain,
seeds)` is the code rungs' measurement itself.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from traceladder.errors import UserError
from traceladder.evaluate import evaluate_store
from traceladder.evaluate.judge.phase import sim_judge_options
from traceladder.produce.agent.client import choose_model
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.runner import RunOptions, run_suite
from traceladder.store.db import Store
from traceladder.store.runs import labelled_verdicts
from traceladder.suite.domain.base import Domain
from traceladder.suite.domain.registry import load_domain
from traceladder.workflows.judge_selfcheck import JudgeSelfcheckRequest, JudgeSelfcheckResult, judge_selfcheck


@dataclass(frozen=True)
class SelfcheckRequest:
    """One `sim:faulty` run per seed of `seeds` (distinct) over `domain`'s suite (or `cases_path`),
    kept in the store at `db` (None: a temporary one, removed after)."""

    seeds: tuple[int, ...]
    domain: str
    db: Path | None = None
    cases_path: Path | None = None


@dataclass(frozen=True)
class Disagreement:
    run_id: str
    case_id: str
    fault: str
    expected: str
    actual: str
    explanation: str


@dataclass(frozen=True)
class SelfCheck:
    judged: int
    disagreements: tuple[Disagreement, ...]
    faults: dict[str, int]

    @property
    def misjudgment_rate(self) -> float:
        return len(self.disagreements) / self.judged if self.judged else 0.0


@overload
def run_selfcheck(request: SelfcheckRequest) -> SelfCheck: ...
@overload
def run_selfcheck(request: JudgeSelfcheckRequest) -> JudgeSelfcheckResult: ...


def run_selfcheck(request: SelfcheckRequest | JudgeSelfcheckRequest) -> SelfCheck | JudgeSelfcheckResult:
    """The `selfcheck` workflow: the code rungs on labelled faults, or (`JudgeSelfcheckRequest`)
    a judge on the labelled set. `UserError` for a seed listed twice, before any run."""
    if isinstance(request, JudgeSelfcheckRequest):
        return judge_selfcheck(request)
    if len(set(request.seeds)) != len(request.seeds):
        raise UserError(f"--seeds lists a seed twice: {','.join(map(str, request.seeds))!r}")
    domain = load_domain(request.domain)
    with tempfile.TemporaryDirectory() as tmp, Store(request.db or Path(tmp) / "selfcheck.duckdb") as store:
        return selfcheck(store, domain, request.seeds, request.cases_path)


def selfcheck(
    store: Store, domain: Domain, seeds: Sequence[int], cases_path: Path | None = None
) -> SelfCheck:
    choice = choose_model("sim:faulty", None)
    run_ids = []
    for seed in seeds:
        config = AgentConfig(model=choice.model, sim_seed=seed)
        options = RunOptions(cases_path=cases_path, concurrency=4)
        run_ids.append(run_suite(store, choice, config, options, domain=domain).run_id)
    judge = sim_judge_options()  # the labels include faults only rung 5 can see
    for run_id in run_ids:
        evaluate_store(store, run_id=run_id, domain=domain.name, cases_path=cases_path, judge=judge)
    return compare_labels(store, run_ids)


def compare_labels(store: Store, run_ids: Sequence[str]) -> SelfCheck:
    """Compare stored results with the simulator's labels for these runs."""
    rows = labelled_verdicts(store, run_ids)
    disagreements: list[Disagreement] = []
    faults: dict[str, int] = {}
    for run_id, case_id, raw_label, verdict, failure_class, explanation in rows:
        label = json.loads(raw_label)
        faults[label["fault"]] = faults.get(label["fault"], 0) + 1
        want = f"{label['verdict']}/{label['failure_class']}"
        got = f"{verdict}/{failure_class}"
        if want != got:
            disagreements.append(Disagreement(run_id, case_id, label["fault"], want, got, explanation))
    return SelfCheck(len(rows), tuple(disagreements), dict(sorted(faults.items())))
