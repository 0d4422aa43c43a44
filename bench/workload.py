"""The suite-shaped tool-call workload the evaluation benchmarks share: one trace per retail case
drawn at random — its golden calls plus extra reads (2–6 calls), ~15% with a wrong argument value,
~3% with arguments that are not valid JSON."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

READS = [("get_user", {"user_id": "U101"}), ("list_orders", {"user_id": "U102"}),
         ("get_return_policy", {}), ("get_order", {"order_id": "W444"})]  # fmt: skip


def suite_calls(case: Any, rng: random.Random) -> Iterator[tuple[int, str, str, str]]:
    """(ordinal, tool, argument text, result text) of one trace for `case`."""
    sequence = [(c.tool, dict(c.params)) for c in case.calls]
    while len(sequence) < 2 or (len(sequence) < 6 and rng.random() < 0.5):
        sequence.insert(rng.randrange(len(sequence) + 1), rng.choice(READS))
    for ordinal, (tool, args) in enumerate(sequence, 1):
        roll = rng.random()
        if roll < 0.15 and args:
            key = rng.choice(list(args))
            args = dict(args, **{key: f"X{rng.randrange(10_000)}"})  # a wrong, often schema-invalid value
        raw = json.dumps(args, ensure_ascii=False)
        if roll > 0.97:
            raw = raw[:-1]  # invalid JSON
        yield ordinal, tool, raw, '{"action_id": "ACT-001"}' if tool.startswith("request_") else "{}"
