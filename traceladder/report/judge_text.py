"""Rung 5 in one sentence, the same in every rendering (terminal, HTML)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def judge_sentence(block: Mapping[str, Any]) -> str:
    """What the judge decided, what it cost, and how many judge calls the code rungs spared."""
    model = block["model"] or "?"
    simulated = " — the simulated judge, fixed heuristics, not a model" if model.startswith("sim:") else ""
    cost = "unknown (no price for this model)" if block["cost_usd"] is None else f"${block['cost_usd']:.4f}"
    left = [
        f"{block[key]} {what}"
        for key, what in (
            ("errors", "judge errors"),
            ("over_budget", "left unjudged: the judge budget was spent"),
            ("no_answer", "without a final answer to judge"),
        )  # fmt: skip
        if block[key]
    ]
    return (
        f"Rung 5 (judge {model}{simulated}): {block['survivors']} traces survived the code rungs — "
        f"{block['judged_pass']} pass, {block['judged_fail']} fail"
        + (f", {'; '.join(left)}" if left else "")
        + f". Judge calls made: {block['judge_calls']} (cache hits: {block['cache_hits']}); "
        f"avoided by the ladder: {block['avoided_by_ladder']} (traces a code rung settled). "
        f"Tokens: {block['input_tokens'] + block['output_tokens']}; cost: {cost}."
    )
