"""The evaluate hot path against plain references, on varied inputs: each shortcut must give
exactly what the straightforward computation gives.

* pairing: `pair_calls` (the in-order walk, the optimum's weight name by name, the assignment
  only when order is not kept) against the general path as it was — every same-name pair
  compared, the optimal assignment, then the ordered DP — with repeated tool names and shuffles;
* `exact` matchers compiled for strings, lists of strings and numbers against canonical forms;
* `Analysis.classify` against the dictionary walk it replaces;
* `Analysis.diffs` (an exact-match pass, classifying only when it finds a difference or the
  schema rejects a parameter) against every parameter classified;
* end to end: the result rows `evaluate` writes (judged once per distinct trace, rows taken per
  trace in Arrow) against each trace judged alone, its rows built alone.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from bulk_store import bulk_store
from hypothesis import given, settings
from hypothesis import strategies as st

from traceladder.evaluate import evaluate_store
from traceladder.evaluate.assemble import CallParser, build_context, inputs_for, raw_calls_by_trace
from traceladder.evaluate.rows import RowBuilder
from traceladder.evaluate.rungs.analysis import Analysis
from traceladder.evaluate.rungs.assignment import max_weight_assignment
from traceladder.evaluate.rungs.compare import _canonical, compile_rule
from traceladder.evaluate.rungs.inputs import DomainRules, TraceInputs
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.evaluate.rungs.matching import CompiledExpected, Pairing, _best_ordered, pair_calls
from traceladder.evaluate.rungs.schema import SchemaRegistry
from traceladder.evaluate.rungs.types import ArgDiff, Call, Expected
from traceladder.store import Store
from traceladder.store.readers import read_call_table, read_units
from traceladder.suite.domain.retail import load_retail_domain

TOOLS = ("get_order", "get_user", "cancel_order")


def reference_pairing(
    actual: Sequence[Call],
    expected: Sequence[CompiledExpected],
    valid: Callable[[int], bool],
    compare: Callable[[int, int], tuple[ArgDiff, ...]],
) -> Pairing:
    """Every same-name pair compared, the optimal assignment, then order (traceladder 3.0.0)."""
    diffs = [
        [compare(i, j) if e.name == a.name else None for j, a in enumerate(actual)]
        for i, e in enumerate(expected)
    ]
    weights = [
        [0.0 if d is None else (2.0 if not d and valid(j) else 1.0) for j, d in enumerate(row)]
        for row in diffs
    ]
    best = max_weight_assignment(weights)
    if len(expected) <= 1:
        chosen, respected = best, True
    else:
        ordered = _best_ordered(weights)
        respected = sum(weights[i][j] for i, j in ordered) == sum(weights[i][j] for i, j in best)
        chosen = ordered if respected else best
    full = tuple((i, j) for i, j in chosen if weights[i][j] == 2.0)
    partial = tuple((i, j, diffs[i][j] or ()) for i, j in chosen if weights[i][j] == 1.0)
    return Pairing(full, partial, respected)


def _lists(seed: int) -> tuple[list[Call], list[CompiledExpected], frozenset[int]]:
    """Expected calls that often repeat a tool (so a name has several expected and actual calls),
    actual calls built from them — kept, perturbed, broken or dropped — with extras, sometimes
    shuffled."""
    rng = random.Random(seed)
    expected = [
        Expected(rng.choice(TOOLS), {"id": rng.randrange(3), "tags": ["a", "b"][: rng.randrange(3)]},
                 None if rng.random() < 0.2 else {"tags": rng.choice(["exact", "any"])})
        for _ in range(rng.randrange(0, 6))
    ]  # fmt: skip
    actual: list[Call] = []
    for e in expected:
        while rng.random() < 0.4:
            actual.append(Call(rng.choice(TOOLS), {"id": rng.randrange(3)}))
        roll = rng.random()
        if roll < 0.6:
            actual.append(Call(e.name, dict(e.arguments)))
        elif roll < 0.75:
            actual.append(Call(e.name, dict(e.arguments, id=rng.choice([9, 1.0, True, "1"]))))
        elif roll < 0.85:
            actual.append(Call(e.name, dict(e.arguments, tags=["b", "a", "a"])))
        elif roll < 0.9:
            actual.append(Call(e.name, None, "{", parsed=False))
    while rng.random() < 0.3:
        actual.append(Call(rng.choice(TOOLS), {"id": rng.randrange(3)}))
    if rng.random() < 0.4:
        rng.shuffle(actual)
    invalid = frozenset(j for j in range(len(actual)) if rng.random() < 0.1)
    return actual, [CompiledExpected.of(e) for e in expected], invalid


@settings(max_examples=3000, deadline=None)
@given(st.integers(0, 2**32))
def test_pairing_is_the_previous_general_paths(seed):
    actual, expected, invalid = _lists(seed)

    def valid(j: int) -> bool:
        return j not in invalid

    def compare(i: int, j: int) -> tuple[ArgDiff, ...]:
        return expected[i].diffs(actual[j])

    want = reference_pairing(actual, expected, valid, compare)
    assert pair_calls(actual, expected, valid=valid) == want
    assert pair_calls(actual, expected, valid=valid, compare=compare) == want


def test_the_workload_reaches_every_branch_of_the_optimum():
    """Repeated names with several expected and several actual calls (the assignment on a name's
    own calls), and pairings that do not keep the order (the assignment itself)."""
    several = unordered = 0
    for seed in range(1500):
        actual, expected, invalid = _lists(seed)
        names = [e.name for e in expected]
        several += any(names.count(n) > 1 and sum(a.name == n for a in actual) > 1 for n in names)
        pairing = reference_pairing(actual, expected, lambda j, s=invalid: j not in s,
                                    lambda i, j, e=expected, a=actual: e[i].diffs(a[j]))  # fmt: skip
        unordered += not pairing.order_respected
    assert several > 200 and unordered > 50


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False)
    | st.sampled_from(["a", "b", "A"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)
    ),
    max_leaves=8,
)


@settings(max_examples=2000, deadline=None)
@given(want=_JSON | st.lists(st.sampled_from(["a", "b", "c"]), max_size=4), got=_JSON)
def test_exact_matchers_compare_as_canonical_forms(want, got):
    equal = _canonical(got, False) == _canonical(want, False)
    assert compile_rule("exact", want)(got) == ((True, None) if equal else (False, "PARAM_WRONG_VALUE"))
    assert compile_rule("exact", want)(want) == (True, None)


@functools.cache
def _retail_rules() -> tuple[DomainRules, SchemaRegistry]:
    """Built once: each example only classifies (building them was 97% of this test's time)."""
    domain = load_retail_domain()
    return DomainRules.of(domain), SchemaRegistry(domain.tool_schemas)


@settings(max_examples=1000, deadline=None)
@given(
    param=st.sampled_from(["order_id", "user_id", "reason", "items"]),
    value=_JSON
    | st.sampled_from(["W001", "W999", "U101", "U999"])
    | st.lists(st.fixed_dictionaries({"order_id": st.sampled_from(["W001", "W999"])}), max_size=2),
)
def test_classify_is_the_dictionary_walk(param, value):
    rules, registry = _retail_rules()
    call = Call("get_order", {"order_id": "W001"}, '{"order_id": "W001"}')
    analysis = Analysis(TraceInputs("t", (call,), None, registry, rules))
    hallucinated = rules.has_unknown_id({param: value})
    assert analysis.classify(call, param, value) == ("PARAM_HALLUCINATED_ID" if hallucinated else None)


def _sorted_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    rows = table.drop_columns(["evaluated_at"]) if "evaluated_at" in table.column_names else table
    return sorted((tuple(map(repr, r.values())) for r in rows.to_pylist()), key=repr)


def test_evaluates_rows_are_each_trace_judged_alone(tmp_path: Path):
    """1,500 traces, 400 distinct (so most are judged once for several): the rows `evaluate`
    writes are the rows each trace gets when judged on its own: no verdict shared with another
    trace, its own call parser, its own row builder."""
    db = tmp_path / "t.duckdb"
    bulk_store(db, 1500, distinct=400, seed=11)
    with Store(db) as store:
        evaluate_store(store, workers=1)
        written = [
            store.conn.sql(f"SELECT * FROM {t}").to_arrow_table()
            for t in ("trace_results", "rung_results", "findings")
        ]
        units = read_units(store)
        calls = raw_calls_by_trace(read_call_table(store, [u.trace_id for u in units]))
    ctx = build_context(units, Ladder())
    requests = frozenset().union(*(d.rules.requests for d in ctx.domains.values()))
    alone: list[list[pa.Table]] = [[], [], []]
    for unit in units:
        inputs = inputs_for(unit, CallParser(requests).calls(calls.get(unit.trace_id, ())), ctx)
        builder = RowBuilder(ctx.ladder.version)
        builder.add(unit, inputs.case, ctx.ladder.settle(inputs))
        tables = builder.tables()
        for k, table in enumerate((tables.traces, tables.rungs, tables.findings)):
            alone[k].append(table)
    assert len(units) == 1500
    for table, parts in zip(written, alone, strict=True):
        assert _sorted_rows(table) == _sorted_rows(pa.concat_tables(parts))


_RETAIL_VALUES = {  # valid, unknown ids, wrong formats
    "order_id": ["W441", "W001", "W999", "w441", 7, None, "W" + "1" * 40],
    "user_id": ["U101", "U999", ""],
    "reason": ["changed_mind", "other", "ordered by mistake", 3],
    "comment": ["ok", "x" * 600],
}


@settings(max_examples=1500, deadline=None)
@given(
    want=st.dictionaries(st.sampled_from(sorted(_RETAIL_VALUES)), st.just(None), min_size=1, max_size=3),
    data=st.data(),
    tool=st.sampled_from(["get_order", "request_cancel", "get_user"]),
    rule=st.sampled_from(["exact", "any", None]),
)
def test_diffs_with_the_exact_match_pass_are_every_parameter_classified(want, data, tool, rule):
    rules, registry = _retail_rules()
    expected_args = {k: data.draw(st.sampled_from(_RETAIL_VALUES[k])) for k in want}
    actual_args = {
        k: data.draw(st.sampled_from([expected_args.get(k), *_RETAIL_VALUES[k]]))
        for k in data.draw(st.lists(st.sampled_from(sorted(_RETAIL_VALUES)), unique=True, max_size=4))
    }
    if data.draw(st.booleans()):
        actual_args = dict(expected_args)  # the usual pair: the call made as expected
    call = Call(tool, actual_args, json.dumps(actual_args))
    expected = Expected(tool, expected_args, None if rule is None else dict.fromkeys(expected_args, rule))
    analysis = Analysis(TraceInputs("t", (call,), None, registry, rules))
    analysis._expected = (CompiledExpected.of(expected),)
    reference = CompiledExpected.of(expected).diffs(call, analysis.classify)
    assert analysis.diffs(0, 0) == reference


def test_a_constant_rung_result_is_one_row_however_many_verdicts_share_it():
    """A rung's constant result (one object, `ladder._constant`) is built into a row once; each
    trace still gets its own row for it, beside its own rows for the rungs that ran."""
    from traceladder.evaluate.rungs.ladder import _constant
    from traceladder.evaluate.rungs.types import RungResult, Verdict, VerdictValue
    from traceladder.store.readers import UnitRow

    state = next(r for r in Ladder().rungs if r.NAME == "state")
    absent = _constant(state, "not_evaluated", "not evaluated: no sandbox ledger")
    builder = RowBuilder("test")
    for n in range(5):  # five distinct verdicts: rung 1 differs, the state rung's result is shared
        ran = RungResult(1, "schema", "pass", {"valid_fraction": n / 5}, explanation=f"{n}/5")
        verdict = Verdict(VerdictValue.PASS, None, 1, "schema", (ran, absent), "pass")
        builder.add(UnitRow(f"t{n}", "r", None, 0, None, "ok", None), None, verdict)
    assert len(builder.rung_rows) == 6  # five rung-1 rows and one state row
    rungs = builder.tables().rungs.sort_by([("trace_id", "ascending"), ("rung", "ascending")])
    assert rungs.num_rows == 10
    assert rungs.column("explanation").to_pylist() == [
        text for n in range(5) for text in (f"{n}/5", "not evaluated: no sandbox ledger")
    ]
    scores = rungs.column("scores").to_pylist()
    assert scores[::2] == [[("valid_fraction", n / 5)] for n in range(5)] and scores[1::2] == [[]] * 5


def _retail_trace(rng: random.Random, cases: Sequence[Any]) -> tuple[Any, tuple[Call, ...]]:
    """A retail case and calls made for it: golden calls kept, given a wrong or malformed value,
    an argument left out or one not allowed, made twice or dropped, reads added, sometimes
    shuffled."""
    case = rng.choice(cases)
    calls: list[tuple[str, dict[str, Any]]] = []
    for golden in case.calls:
        args = dict(golden.params)
        roll = rng.random()
        if roll < 0.15 and args:
            args[rng.choice(sorted(args))] = rng.choice(["W999", "X12", 7, "U101"])
        elif roll < 0.25 and args:
            del args[rng.choice(sorted(args))]
        elif roll < 0.3:
            continue
        elif roll < 0.35:  # a parameter the schema does not allow: no difference, yet invalid
            args["note"] = "x"
        calls.append((golden.tool, args))
        if rng.random() < 0.1:
            calls.append((golden.tool, args))
    while rng.random() < 0.4:
        calls.insert(rng.randrange(len(calls) + 1), rng.choice(
            [("get_user", {"user_id": "U101"}), ("get_order", {"order_id": "W444"}),
             ("get_order", {"order_id": "W"}), ("cancel_order", {"order_id": "W441"})]))  # fmt: skip
    if rng.random() < 0.2:
        rng.shuffle(calls)
    made = tuple(
        Call(tool, args, json.dumps(args), rng.random() > 0.05, None, n + 1)
        for n, (tool, args) in enumerate(calls)
    )
    return case, made


def test_partial_credit_from_the_pairing_is_the_assignment():
    """Rung 4's optimal score read from rung 2's pairing (decision 650) against the assignment it
    replaces, credit by credit, on retail traces — including those where the shortcut must step
    aside (a same-name pair with no difference on a schema-invalid call)."""
    from traceladder.evaluate.rungs import partial_credit
    from traceladder.suite.cases import load_cases

    rules, registry = _retail_rules()
    cases = [c for c in load_cases() if c.calls]
    rng = random.Random(650)
    shortcut = stepped_aside = 0
    for _ in range(4000):
        case, calls = _retail_trace(rng, cases)
        analysis = Analysis(TraceInputs("t", calls, case, registry, rules))
        judged, expected = analysis.match.judged, analysis.expected
        index = {id(c): j for j, c in enumerate(calls)}
        position = {id(e): i for i, e in enumerate(expected)}

        def credit(e: CompiledExpected, c: Call, a: Analysis = analysis, idx: dict = index,
                   pos: dict = position) -> float:  # fmt: skip
            return 0.0 if e.name != c.name else 0.5 if a.diffs(pos[id(e)], idx[id(c)]) else 1.0

        reference = partial_credit.optimal(judged, expected, credit)
        from_pairing = partial_credit._from_pairing(analysis, len(judged))
        shortcut += from_pairing is not None and len(analysis.match.pairing.full) < len(expected)
        stepped_aside += from_pairing is None
        assert partial_credit.evaluate(analysis.inputs, analysis).scores["optimal"] == reference
    assert shortcut > 500 and stepped_aside > 20


def _empty_the_memos(registry: SchemaRegistry) -> None:
    """Every memo a verdict may be answered from: the registry's and the ladder modules'."""
    from traceladder.evaluate.rungs import ladder, partial_credit, trajectory

    for memo in (registry._memo, registry._outcomes, registry.pair_diffs, registry.ignorable,
                 trajectory._SCORED, partial_credit._RESULTS):  # fmt: skip
        memo.clear()
    ladder._ABSENT.clear()


def test_memoised_answers_are_the_answers_computed_afresh():
    """Rung 1's answer per call and position, the pair comparisons, the ignorability of an
    unmatched call, trajectory's and partial credit's shared results and the rungs' absent
    results are kept across traces (decision 770). Each is a pure function of its key: 3,000
    retail traces judged with every memo warm — the same call texts at other positions, with
    another status, under domain rules that know other ids, for cases that whitelist one read
    only — give the verdicts each trace gets with every memo emptied first."""
    import dataclasses

    from traceladder.suite.cases import load_cases

    rules, _ = _retail_rules()
    registry = SchemaRegistry(load_retail_domain().tool_schemas)  # its own memos, emptied below
    # the same schemas and cases under other rules: no order or user id is known, so a call the
    # retail rules pass or let go is a hallucinated id or a read that may not be ignored
    unknown = dict.fromkeys(("order_id", "user_id"), frozenset[str]())
    other = dataclasses.replace(rules, id_fields={**rules.id_fields, **unknown})
    cases = [c for c in load_cases() if c.calls]
    cases += [dataclasses.replace(c, allowed_extra=("list_orders",)) for c in cases[:20]]
    rng = random.Random(770)
    traces = []
    for n in range(3000):
        case, calls = _retail_trace(rng, cases)
        traces.append((case, calls, other if n % 3 == 0 else rules))
    ladder = Ladder()
    warm = [
        ladder.settle(TraceInputs(f"t{n}", c, case, registry, r)) for n, (case, c, r) in enumerate(traces)
    ]
    varied = {(v.verdict, v.settled_by) for v in warm}
    assert len(varied) >= 3  # passes, and failures settled at more than one rung
    for n, (case, calls, r) in enumerate(traces):
        _empty_the_memos(registry)
        assert ladder.settle(TraceInputs(f"t{n}", calls, case, registry, r)) == warm[n], n
