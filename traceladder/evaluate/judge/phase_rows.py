"""The judge phase's rows: the new judgments (the `judgments` cache, each with its cost) and one
`judge_traces` row per survivor saying what happened to it — `cached`, `judged`, `error`,
`over_budget` or `no_answer` — with the tokens and cost charged to it (a call's cost to the first
trace with that trajectory; the others shared it). Pure: the store writes them (`store.judgments`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from traceladder.evaluate.judge.asking import Ask, Replies, verdict_of
from traceladder.evaluate.judge.outcome import JudgeOutcome
from traceladder.evaluate.judge.prices import Prices
from traceladder.evaluate.rungs.judge import CriterionVerdict, Judgment

if TYPE_CHECKING:
    from traceladder.evaluate.judge.phase import JudgeOptions, PhaseResult

Key = tuple[str, str]  # (prompt hash, trajectory hash)


def _criteria_json(criteria: tuple[CriterionVerdict, ...]) -> str:
    return json.dumps([c._asdict() for c in criteria], ensure_ascii=False)


def _criteria_from(text: str, codes: dict[str, str]) -> tuple[CriterionVerdict, ...]:
    return tuple(
        CriterionVerdict(c["criterion"], c["verdict"], c["reason"], codes.get(c["criterion"], c["code"]))
        for c in json.loads(text)
    )


def judgment_rows(
    replies: Replies, asks: Mapping[Key, Ask], model: str, rubric_version: str, prices: Prices, now: datetime
) -> list[dict[str, Any]]:
    """A `judgments` row for each call that gave a usable reply (an error is not cached)."""
    new = []
    for key, (reply, judge_trace) in replies.items():
        if reply.criteria is not None:
            new.append(
                {
                    "judge_model": model,
                    "prompt_hash": key[0],
                    "trajectory_hash": key[1],
                    "verdict": verdict_of(reply.criteria),
                    "criteria": _criteria_json(reply.criteria),
                    "rubric_version": rubric_version,
                    "input_tokens": reply.input_tokens,
                    "output_tokens": reply.output_tokens,
                    "cost_usd": prices.cost(model, reply.input_tokens, reply.output_tokens),
                    "attempts": reply.attempts,
                    "judge_trace_id": judge_trace,
                    "judged_trace_id": asks[key].first_trace,
                    "created_at": now,
                }
            )
    return new


def total_cost(prices: Prices, model: str, replies: Replies) -> float | None:
    costs = [prices.cost(model, r.input_tokens, r.output_tokens) for r, _ in replies.values()]
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def trace_rows(
    keyed: Mapping[str, Key],
    cached: Mapping[Key, str],
    replies: Replies,
    run_of: Mapping[str, str | None],
    options: JudgeOptions,
    out: PhaseResult,
    now: datetime,
) -> list[dict[str, Any]]:
    """A `judge_traces` row per survivor, and its outcome in `out` (its judgment, or why rung 5
    did not decide it; the counts). `keyed`: each judgeable trace's key; the traces with no
    answer to judge are already in `out.absent`."""
    model, codes = options.endpoint.model, options.rubric.codes
    rows: list[dict[str, Any]] = []
    charged: set[Key] = set()
    hits: dict[Key, Judgment] = {}
    for trace_id, key in keyed.items():
        row: dict[str, Any] = {
            "trace_id": trace_id,
            "run_id": run_of[trace_id],
            "judge_model": model,
            "prompt_hash": key[0],
            "trajectory_hash": key[1],
            "evaluated_at": now,
        }
        if key in cached:
            if key not in hits:  # parsed once per stored judgment, however many traces share it
                hits[key] = Judgment(model, _criteria_from(cached[key], codes), cached=True)
            out.judgments[trace_id] = hits[key]
            out.cache_hits += 1
            rows.append(row | {"outcome": JudgeOutcome.CACHED})
            continue
        answered = replies.get(key)
        if answered is None:
            out.absent[trace_id] = (
                f"the judge budget ({options.budget.describe()}) was spent before this trace"
            )
            out.over_budget += 1
            rows.append(row | {"outcome": JudgeOutcome.OVER_BUDGET})
            continue
        reply, judge_trace = answered
        # The first trace with this trajectory carries the call's cost; the others shared it.
        first = key not in charged
        charged.add(key)
        cost = options.prices.cost(model, reply.input_tokens, reply.output_tokens) if first else 0.0
        usage = {
            "input_tokens": reply.input_tokens if first else 0,
            "output_tokens": reply.output_tokens if first else 0,
            "cost_usd": cost,
            "judge_trace_id": judge_trace,
        }
        if reply.criteria is None:
            out.absent[trace_id] = f"judge error: {reply.error}"
            out.errors += 1
            rows.append(row | usage | {"outcome": JudgeOutcome.ERROR, "error": reply.error})
        else:
            out.judgments[trace_id] = Judgment(model, reply.criteria)
            rows.append(row | usage | {"outcome": JudgeOutcome.JUDGED})
    for trace_id in out.absent.keys() - keyed.keys():
        rows.append(
            {
                "trace_id": trace_id,
                "run_id": run_of[trace_id],
                "judge_model": model,
                "outcome": JudgeOutcome.NO_ANSWER,
                "error": out.absent[trace_id],
                "evaluated_at": now,
            }
        )
    return rows
