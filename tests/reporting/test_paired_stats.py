"""The statistics of `traceladder compare`, against values computed by hand: McNemar's exact test
(two-sided binomial on the discordant pairs), the pass^k pairing of repeated trials, and the
pure builders of ComparisonV1 and LeaderboardV1 on tiny inline reports."""

from __future__ import annotations

from math import comb

import pytest

from traceladder.report.comparison import compare_sides
from traceladder.report.leaderboard import leaderboard
from traceladder.report.paired import PairedOutcome, mcnemar, mcnemar_exact, pair


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (1, 8, 0.0390625),  # n=9: 2 * (C(9,0) + C(9,1)) / 2^9 = 2 * 10 / 512
        (8, 1, 0.0390625),  # symmetric
        (0, 6, 0.03125),  # 2 / 64
        (0, 5, 0.0625),  # 2 / 32: five discordant cases alone can never reach 0.05
        (2, 10, 0.03857421875),  # n=12: 2 * (1 + 12 + 66) / 4096
        (3, 3, 1.0),  # capped at 1: the doubled tail passes the middle
        (0, 0, 1.0),  # no discordant case: no evidence of a difference
        (0, 1, 1.0),
        (31, 0, 2 / 2**31),
    ],
)
def test_mcnemar_exact_matches_hand_computed_values(b, c, p):
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_mcnemar_exact_is_exact_for_large_suites():
    # 500 discordant cases split 230/270: the integer sum, not a normal approximation.
    tail = sum(comb(500, i) for i in range(231))
    assert mcnemar_exact(230, 270) == pytest.approx(2 * tail / 2**500, rel=1e-12)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_pairing_is_all_of_the_first_k_scored_trials():
    assert pair(["PASS"], ["FAIL"]) == PairedOutcome(True, False, 1)
    # k is the smaller trial count: A's third trial is not compared against B's two.
    assert pair(["PASS", "PASS", "FAIL"], ["PASS", "PASS"]) == PairedOutcome(True, True, 2)
    # a flaky case fails its side
    assert pair(["PASS", "FAIL"], ["PASS", "PASS"]) == PairedOutcome(False, True, 2)
    # SKIP and NOT_EVALUATED are no trials; AGENT_ERROR is a trial that did not pass
    assert pair(["SKIP", "PASS"], ["AGENT_ERROR"]) == PairedOutcome(True, False, 1)
    assert pair(["NOT_EVALUATED", "PASS"], ["PASS"]) == PairedOutcome(True, True, 1)
    assert pair(["SKIP"], ["PASS"]) is None


def test_mcnemar_table_and_direction():
    outcomes = [PairedOutcome(True, False, 1)] * 6 + [PairedOutcome(True, True, 1)] * 3
    outcomes += [PairedOutcome(False, False, 1)]
    test = mcnemar(outcomes)
    assert (test.both_pass, test.b, test.c, test.both_fail, test.pairs) == (3, 6, 0, 1, 10)
    assert test.p_value == 0.03125 and test.b_worse and not test.b_better
    assert not mcnemar(outcomes, alpha=0.03).significant  # 0.03125 is not below 0.03
    better = mcnemar([PairedOutcome(False, True, 1)] * 6)
    assert better.b_better and not better.b_worse
    with pytest.raises(ValueError):
        mcnemar(outcomes, alpha=1.0)


def _report(run_id, model, results, cases_hash="h1"):
    """A minimal ReportV1 with what the builders read."""
    counts = {v: sum(1 for r in results if r[2] == v) for v in ("PASS", "FAIL", "SKIP", "AGENT_ERROR")}
    dims = sorted({r[1] for r in results})
    block = {d: {"verdict_counts": {v: sum(1 for r in results if r[1] == d and r[2] == v) for v in counts}}
             for d in dims}  # fmt: skip
    return {
        "run": {
            "run_id": run_id,
            "model": model,
            "input_hashes": {"cases": cases_hash, "system_prompt": model},
            "evaluator_version": "1",
        },  # fmt: skip
        "summary": {"verdict_counts": counts, "dimensions": block},
        "results": [
            {
                "case_id": case,
                "repeat_index": k,
                "dimension": dim,
                "verdict": verdict,
                "trace_id": f"t-{case}-{k}",
                "taxonomy": cls,
                "explanation": f"{case} explained",
                "findings": [{"rung": 2, "code": cls, "message": f"{case} went wrong"}] if cls else [],
            }
            for k, (case, dim, verdict, cls) in enumerate(results)
        ],  # fmt: skip
    }


def test_compare_sides_counts_flips_deltas_and_classes():
    a = _report("A", "m-a", [("c1", "D1", "PASS", None), ("c2", "D1", "PASS", None), ("c3", "D2", "FAIL", "TOOL_WRONG"),
                             ("c4", "D2", "PASS", None), ("c5", "D2", "PASS", None)])  # fmt: skip
    b = _report("B", "m-b", [("c1", "D1", "FAIL", "PARAM_MISSING"), ("c2", "D1", "PASS", None), ("c3", "D2", "PASS", None),
                             ("c4", "D2", "AGENT_ERROR", None), ("c6", "D2", "PASS", None)])  # fmt: skip
    cmp = compare_sides([a], [b], dimensions=("D1", "D2"))
    assert cmp["paired_cases"] == 4 and cmp["only_a"] == ["c5"] and cmp["only_b"] == ["c6"]
    assert cmp["differs"] == ["model", "system_prompt"]
    t = cmp["mcnemar"]
    assert (t["b"], t["c"], t["both_pass"], t["both_fail"]) == (2, 1, 1, 0)  # c4's AGENT_ERROR regressed
    assert t["p_value"] == 1.0 and t["conclusion"] == "no significant difference"
    rows = {r["dimension"]: r for r in cmp["dimensions"]}
    assert [r["dimension"] for r in cmp["dimensions"]] == ["all", "D1", "D2"]
    assert (rows["all"]["a"]["passed"], rows["all"]["a"]["scored"]) == (3, 4)
    assert (rows["all"]["b"]["passed"], rows["all"]["b"]["scored"]) == (2, 3)  # AGENT_ERROR not scored
    assert rows["D1"]["delta"] == pytest.approx(-0.5) and rows["D1"]["regressed"] == 1
    assert rows["D2"]["improved"] == 1 and rows["D2"]["regressed"] == 1
    classes = {c["failure_class"]: (c["a"], c["b"]) for c in cmp["classes"]}
    assert classes == {"PARAM_MISSING": (0, 1), "TOOL_WRONG": (1, 0), "AGENT_ERROR": (0, 1)}
    flips = {f["case_id"]: f for f in cmp["flips"]}
    assert set(flips) == {"c1", "c3", "c4"}
    assert (
        flips["c1"]["direction"] == "regressed"
        and flips["c1"]["evidence"]["failure_class"] == "PARAM_MISSING"
    )
    assert flips["c1"]["evidence"]["finding"]["message"] == "c1 went wrong"
    assert flips["c3"]["direction"] == "improved" and flips["c3"]["evidence"]["failure_class"] == "TOOL_WRONG"


def test_compare_sides_pairs_run_groups_by_pass_hat_k():
    a1 = _report("A1", "m", [("c1", "D1", "PASS", None), ("c2", "D1", "PASS", None)])
    a2 = _report("A2", "m", [("c1", "D1", "FAIL", "TOOL_WRONG"), ("c2", "D1", "PASS", None)])
    b = _report("B", "m", [("c1", "D1", "PASS", None), ("c2", "D1", "PASS", None)])
    cmp = compare_sides([a1, a2], [b])
    # one trial on B, so only A's first trial counts: c1 PASS/PASS, c2 PASS/PASS
    assert cmp["k"] == [1] and cmp["mcnemar"]["both_pass"] == 2 and not cmp["flips"]
    b2 = _report("B2", "m", [("c1", "D1", "PASS", None), ("c2", "D1", "PASS", None)])
    cmp = compare_sides([a1, a2], [b, b2])
    # two trials each: c1 fails on A (PASS, FAIL), passes on B (PASS, PASS)
    assert cmp["k"] == [2] and (cmp["mcnemar"]["b"], cmp["mcnemar"]["c"]) == (0, 1)
    assert cmp["flips"][0]["a_verdicts"] == ["PASS", "FAIL"] and cmp["a"]["trials_per_case"] == [2]


def test_leaderboard_ranks_by_pass_rate_and_prices_tokens():
    good = _report("R1", "big", [("c1", "D1", "PASS", None), ("c2", "D2", "PASS", None)])
    bad = _report("R2", "small", [("c1", "D1", "FAIL", "TOOL_WRONG"), ("c2", "D2", "PASS", None)])
    prices = {"big": (2.0, 8.0)}

    def price(model, tokens_in, tokens_out):
        p = prices.get(model)
        return None if p is None else (tokens_in * p[0] + tokens_out * p[1]) / 1e6

    usage = {"case_runs": 2, "input_tokens": 1000, "output_tokens": 500}
    board = leaderboard([(bad, usage), (good, usage)], price=price)
    first, second = board["rows"]
    assert (first["rank"], first["run_id"], second["run_id"]) == (1, "R1", "R2")
    assert first["rate"] == 1.0 and second["rate"] == 0.5 and board["dimensions"] == ["D1", "D2"]
    assert second["dimensions"]["D1"]["rate"] == 0.0 and first["tokens_per_case"] == 750
    assert first["cost_per_case_usd"] == pytest.approx((1000 * 2 + 500 * 8) / 1e6 / 2)
    assert second["cost_per_case_usd"] is None  # unpriced: unknown, never zero
    assert first["interval"][0] == pytest.approx(0.3424, abs=1e-4)  # Wilson for 2/2
