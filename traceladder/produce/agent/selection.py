"""Which cases a run runs: a new run's selection (ids, dimensions, repeat), or the rest of a run
to resume — refused when the model, agent or inputs changed since it started. Writes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from traceladder.errors import UserError
from traceladder.produce.agent.run_types import RunOptions
from traceladder.store.db import Store
from traceladder.store.runs import resume_facts
from traceladder.suite.cases.model import Case
from traceladder.suite.domain.base import Domain

# A run's `model` names its subject: a model, or (agent under test) one of these prefixes.
AGENT_SUBJECT_PREFIXES = ("agent:", "agent-cmd:")
MAX_CASE_RUNS = 100_000  # a bigger selection × --repeat is a typo, not an evaluation


def select_cases(
    cases: Sequence[Case], case_ids: Sequence[str], dimensions: Sequence[str], known_dimensions: Sequence[str]
) -> list[Case]:
    known = {c.id for c in cases}
    unknown = [cid for cid in case_ids if cid not in known]
    if unknown:
        raise UserError(f"unknown case {', '.join(unknown)}; list ids with `traceladder cases coverage`")
    bad_dims = [d for d in dimensions if d not in known_dimensions]
    if bad_dims:
        raise UserError(f"unknown dimension {', '.join(bad_dims)}; use {', '.join(known_dimensions)}")
    return [
        c for c in cases
        if (not case_ids or c.id in case_ids) and (not dimensions or c.dimension in dimensions)
    ]  # fmt: skip


def new_selection(cases: Sequence[Case], options: RunOptions, domain: Domain) -> tuple[list[Case], int]:
    """The cases and repeat count a new run asks for (`UserError` for an unknown id or dimension,
    or more than MAX_CASE_RUNS case runs)."""
    dimensions = tuple(domain.suite.dimensions) if domain.suite else ()
    selected = select_cases(cases, options.case_ids, options.dimensions, dimensions)
    if len(selected) * options.repeat > MAX_CASE_RUNS:
        raise UserError(
            f"{len(selected)} cases × --repeat {options.repeat} is more than {MAX_CASE_RUNS} case runs; "
            "lower --repeat or select fewer cases"
        )
    return selected, options.repeat


def resumed_selection(
    store: Store, run_id: str, model: str, hashes: dict[str, str], cases: Sequence[Case]
) -> tuple[list[Case], int]:
    """The cases and repeat count of a run to resume, if it may be resumed with this model (or
    agent) and these inputs (writes nothing)."""
    _, selection = _resumable(store, run_id, model, hashes)
    return [c for c in cases if c.id in selection["case_ids"]], int(selection["repeat"])


def _resumable(store: Store, run_id: str, model: str, hashes: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """The run's selection, if it may be resumed with this model and these inputs (writes nothing)."""
    facts = resume_facts(store, run_id)
    if facts is None:
        raise UserError(f"no run {run_id} in {store.path}; see `traceladder sql 'SELECT * FROM runs'`")
    stored_model, stored, selection, status = facts
    if status == "complete":
        raise UserError(f"run {run_id} is already complete; nothing to resume")
    if stored_model != model:
        if stored_model.startswith(AGENT_SUBJECT_PREFIXES):
            raise UserError(
                f"run {run_id} ran {stored_model!r}; resume it with `traceladder run --resume {run_id}`"
            )
        raise UserError(f"run {run_id} used model {stored_model!r}; resume it with --model {stored_model}")
    changed = [k for k in stored if stored[k] != hashes.get(k) and k != "inputs"]
    if changed:
        raise UserError(f"cannot resume {run_id}: inputs changed since it started ({', '.join(changed)})")
    return run_id, selection
