"""Pairing cost: `pair_calls` in µs per pair (one trace's actual calls against its case's expected
calls), on the suite-shaped workload of bench/workload.py, next to the previous version of
`pair_calls` (the general path alone: every same-name pair compared by the argument comparison of
the time, the optimal assignment, the ordered DP — both copied below as they were) on the same
pairs, in one run, with the ratio.

Each pair's arguments are compared afresh (no diff cache across repetitions); each call's schema
validity (the retail domain's validators) is computed once beforehand, as rung 1 has already
judged it by the time rung 2 pairs. Both versions must give identical pairings;
the script checks that before timing.

    python bench/pair_calls.py [--pairs 10000] [--repeat 5]
    python bench/pair_calls.py --smoke      # a few pairs, seconds: checks the script still runs
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time
from collections.abc import Callable, Sequence

from measures import add_options, measure, reporting  # bench/measures.py
from workload import suite_calls  # bench/workload.py (bench scripts run with bench/ on sys.path)

from traceladder.evaluate.rungs.analysis import compiled_expected
from traceladder.evaluate.rungs.assignment import max_weight_assignment
from traceladder.evaluate.rungs.compare import exact_equal
from traceladder.evaluate.rungs.matching import CompiledExpected, Pairing, _best_ordered, pair_calls
from traceladder.evaluate.rungs.schema import SchemaRegistry
from traceladder.evaluate.rungs.types import ArgDiff, Call
from traceladder.suite.cases import load_cases
from traceladder.suite.domain.retail import load_retail_domain


def previous_diffs(compiled: CompiledExpected, call: Call) -> tuple[ArgDiff, ...]:
    """`CompiledExpected.diffs` of traceladder 3.0.0 with no classifier (verbatim but for that)."""
    want_args = compiled.expected.arguments
    if not call.parsed or not isinstance(call.arguments, dict):
        shown = call.raw if not call.parsed else call.arguments
        return (ArgDiff("(arguments)", want_args, shown, "json object", "PARAM_WRONG_FORMAT"),)
    actual = call.arguments
    diffs: list[ArgDiff] = []
    if compiled.expected.rules is None:  # seed 2: the whole object, exact
        for key in sorted(set(want_args) | set(actual)):
            if key not in actual:
                diffs.append(ArgDiff(key, want_args[key], None, "exact", "PARAM_MISSING"))
            elif key not in want_args:
                diffs.append(ArgDiff(key, None, actual[key], "exact", "PARAM_UNEXPECTED"))
            elif not exact_equal(want_args[key], actual[key]):
                diffs.append(ArgDiff(key, want_args[key], actual[key], "exact", "PARAM_WRONG_VALUE"))
        return tuple(diffs)
    for key, rule, want, matcher in compiled.matchers:
        if key not in actual:
            diffs.append(ArgDiff(key, want, None, rule, "PARAM_MISSING"))
            continue
        got = actual[key]
        ok, code = matcher(got)
        if not ok:
            diffs.append(ArgDiff(key, want, got, rule, code))
    return tuple(diffs)


def previous_pair_calls(
    actual: Sequence[Call],
    expected: Sequence[CompiledExpected],
    *,
    valid: Callable[[int], bool] = lambda j: True,
    compare: Callable[[int, int], tuple[ArgDiff, ...]] | None = None,
) -> Pairing:
    """`pair_calls` before the in-order fast path (traceladder 3.0.0, verbatim but for typing and
    `previous_diffs`)."""
    compiled = list(expected)

    def compared(i: int, j: int) -> tuple[ArgDiff, ...]:
        return compare(i, j) if compare else previous_diffs(compiled[i], actual[j])

    diffs = [
        [compared(i, j) if e.expected.name == a.name else None for j, a in enumerate(actual)]
        for i, e in enumerate(compiled)
    ]
    weights = [
        [0.0 if d is None else (2.0 if not d and valid(j) else 1.0) for j, d in enumerate(row)]
        for row in diffs
    ]
    best = max_weight_assignment(weights)
    if len(compiled) <= 1:
        chosen, respected = best, True
    else:
        total = sum(weights[i][j] for i, j in best)
        ordered = _best_ordered(weights)
        respected = sum(weights[i][j] for i, j in ordered) == total
        chosen = ordered if respected else best
    full = tuple((i, j) for i, j in chosen if weights[i][j] == 2.0)
    partial = tuple((i, j, diffs[i][j] or ()) for i, j in chosen if weights[i][j] == 1.0)
    return Pairing(full, partial, respected)


def workload(n: int, seed: int = 7) -> list[tuple[tuple[Call, ...], tuple[CompiledExpected, ...]]]:
    rng = random.Random(seed)
    cases = [c for c in load_cases() if c.calls]
    pairs = []
    for _ in range(n):
        case = rng.choice(cases)
        calls = []
        for ordinal, tool, raw, _result in suite_calls(case, rng):
            try:
                arguments, parsed = json.loads(raw), True
            except ValueError:
                arguments, parsed = None, False
            calls.append(Call(tool, arguments, raw, True, None, ordinal, parsed))
        pairs.append((tuple(calls), compiled_expected(case)))
    return pairs


def timed(fn: Callable, pairs: list, validity: list[list[bool]], repeat: int) -> float:
    """Best µs per pair over `repeat` passes."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        for (actual, expected), flags in zip(pairs, validity, strict=True):
            fn(actual, expected, valid=flags.__getitem__)
        best = min(best, time.perf_counter() - start)
    return best / len(pairs) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    add_options(parser)
    args = parser.parse_args()
    if args.smoke:
        args.pairs, args.repeat = 200, 1
    with reporting(args):
        run(args)


def run(args: argparse.Namespace) -> None:
    registry = SchemaRegistry(load_retail_domain().tool_schemas)
    pairs = workload(args.pairs)
    validity = [[registry.valid(c) for c in actual] for actual, _ in pairs]
    for (actual, expected), flags in zip(pairs, validity, strict=True):  # identical, or no figure
        valid = flags.__getitem__
        assert pair_calls(actual, expected, valid=valid) == previous_pair_calls(actual, expected, valid=valid)
    ours, previous = [], []
    for _ in range(2):  # alternate, so a load change hits both
        previous.append(timed(previous_pair_calls, pairs, validity, args.repeat))
        ours.append(timed(pair_calls, pairs, validity, args.repeat))
    mine, theirs = min(ours), min(previous)
    print(f"pairs={len(pairs)} calls_per_pair={sum(len(a) for a, _ in pairs) / len(pairs):.1f}")
    print(f"pair_calls_us_per_pair={mine:.1f} previous_version_us={theirs:.1f} speedup={theirs / mine:.2f}x")
    measure(
        "pair_calls, same pairs",
        1e6 / mine,
        "pairs/s",
        baseline=1e6 / theirs,
        baseline_name="previous version",
    )


if __name__ == "__main__":
    main()
