"""A run's rows: the run recorded at its start (its id, selection, configuration and input
hashes), each finished case recorded with its turns, and the one line a failed write ends with.
The SQL is `store.runs`'."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from traceladder.errors import StoreError, first_line
from traceladder.produce.agent.client import ModelChoice, endpoint_for
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.loop import AgentOutcome
from traceladder.store.db import Store
from traceladder.store.runs import NewRun, PlayedTurn, create_run, record_case_run, recorded_config
from traceladder.suite.cases.model import Case
from traceladder.suite.domain.base import Domain


def new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def stored_run(store: Store, run_id: str) -> tuple[dict[str, Any], str | None] | None:
    """The configuration a run recorded (`AgentConfig.recorded()`) and its domain, or None for
    no such run."""
    return recorded_config(store, run_id)


def create_suite_run(
    store: Store, run_id: str, choice: ModelChoice, config: AgentConfig, hashes: dict[str, str],
    suite: Path, selected: list[Case], repeat: int, domain: Domain,
) -> None:  # fmt: skip
    endpoint = endpoint_for(choice)
    create_run(store, NewRun(
        run_id, suite.name, domain.name, choice.model, endpoint.provider, endpoint.host, config.recorded(),
        hashes, run_selection([c.id for c in selected], repeat, domain), len(selected) * repeat,
    ))  # fmt: skip


def run_selection(case_ids: Sequence[str], repeat: int, domain: Domain) -> dict[str, Any]:
    """What a new run records as its selection: the case ids, the repeat count, and the names its
    suite gives its dimensions (`D1` → "tool selection" in the shipped suite, "when to call" in a
    recorded one), so a report names them even where the domain cannot be loaded again."""
    names = dict(domain.suite.dimensions) if domain.suite else {}
    return {"case_ids": list(case_ids), "repeat": repeat, "dimension_names": names}


def record_case(
    store: Store,
    run_id: str,
    case: Case,
    repeat_index: int,
    outcome: AgentOutcome,
    label: dict[str, Any] | None,
) -> None:
    row = [
        run_id, case.id, repeat_index, outcome.trace_id or None, case.dimension, outcome.status,
        outcome.error_type, outcome.error_message, outcome.steps, outcome.final_text,
        outcome.latency_ms, outcome.input_tokens, outcome.output_tokens,
        json.dumps(label) if label else None, datetime.now(UTC).replace(tzinfo=None),
    ]  # fmt: skip
    turns = [
        PlayedTurn(
            index,
            t.trace_id,
            t.status,
            t.error_type,
            t.error_message,
            t.steps,
            t.final_text,
            t.latency_ms,
            t.input_tokens,
            t.output_tokens,
        )  # fmt: skip
        for index, t in enumerate(outcome.turns)
    ]
    record_case_run(store, row, turns)


def write_failed(run_id: str, exc: BaseException) -> StoreError:
    return StoreError(
        f"could not write to the store ({first_line(exc)}); every finished case is kept — "
        f"fix the cause, then `traceladder run --resume {run_id}`"
    )
