"""The shipped suite, its validator (one minimal violation per rule), hashes and coverage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT, cli
from traceladder.suite.cases import input_hashes, load_cases
from traceladder.suite.cases.coverage import coverage_markdown
from traceladder.suite.cases.validator import validate_suite as validate_in
from traceladder.suite.domain.retail import load_retail_domain
from traceladder.suite.domain.retail.suite import CATEGORIES


def shipped_suite_path() -> Path:
    path = load_retail_domain().suite_path
    assert path is not None
    return path


def validate_suite(path: Path):
    return validate_in(path, load_retail_domain())


def records() -> list[dict]:
    return [json.loads(line) for line in shipped_suite_path().read_text("utf-8").splitlines()]


def write(tmp_path: Path, rows: list[dict], raw: str | None = None) -> Path:
    path = tmp_path / "suite.jsonl"
    text = raw if raw is not None else "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_suite_is_clean_and_shaped():
    assert validate_suite(shipped_suite_path()) == []
    cases = load_cases()
    assert len(cases) == 72
    assert {d: sum(c.dimension == d for c in cases) for d in ("D1", "D2", "D3", "D4")} == {
        "D1": 18,
        "D2": 18,
        "D3": 18,
        "D4": 18,
    }
    assert sum(c.negative for c in cases) == 12
    assert len({c.category for c in cases}) == 24
    assert all(
        set(r)
        == {
            "id",
            "dimension",
            "category",
            "instruction",
            "context",
            "golden",
            "negative",
            "skip",
            "skip_reason",
        }
        for r in records()
    )
    rules = {rule for c in cases for call in c.calls for rule in call.param_rules.values()}
    assert rules == {"normalized_str", "normalized_date", "contains", "any"}


def test_cli_validate_passes_on_shipped_suite():
    result = cli("cases", "validate")
    assert result.returncode == 0 and "case_validation=passed" in result.stdout


def _set(path: list, value):
    def mutate(rows):
        target = rows[0]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _drop(key):
    return lambda rows: rows[0].pop(key)


def _call0(key, value):
    return _set(["golden", "calls", 0, key], value)


RULES = [
    ("missing field", _drop("skip_reason"), "skip_reason", "required field is missing"),
    ("unknown field", _set(["extra"], 1), "extra", "unknown field"),
    ("id format", _set(["id"], "fc-d1-1"), "id", "does not match"),
    ("dimension mismatch", _set(["dimension"], "D2"), "dimension", "does not match the dimension"),
    ("empty category", _set(["category"], " "), "category", "non-empty"),
    ("empty instruction", _set(["instruction"], ""), "instruction", "non-empty"),
    ("context keys", _set(["context", "extra"], 1), "context", "exactly db_fixture and notes"),
    ("db_fixture", _set(["context", "db_fixture"], "other"), "context.db_fixture", "standard"),
    ("empty notes", _set(["context", "notes"], ""), "context.notes", "non-empty"),
    ("golden unknown key", _set(["golden", "weights"], 1), "golden.weights", "unknown field"),
    ("calls not a list", _set(["golden", "calls"], {}), "golden.calls", "must be a list"),
    (
        "order_sensitive type",
        _set(["golden", "order_sensitive"], "no"),
        "golden.order_sensitive",
        "boolean",
    ),
    (
        "allowed_extra unique",
        _set(["golden", "allowed_extra"], ["get_user", "get_user"]),
        "golden.allowed_extra",
        "unique",
    ),
    (
        "allowed_extra read-only",
        _set(["golden", "allowed_extra"], ["request_cancel"]),
        "golden.allowed_extra",
        "not a read-only tool",
    ),
    ("call unknown key", _call0("weight", 1), "golden.calls[0].weight", "unknown field"),
    ("unknown tool", _call0("tool", "get_orders"), "golden.calls[0].tool", "not a tool"),
    (
        "params schema",
        _call0("params", {"order_id": "441"}),
        "golden.calls[0].params.order_id",
        "schema",
    ),
    (
        "params additional",
        _call0("params", {"order_id": "W441", "x": 1}),
        "golden.calls[0].params",
        "schema",
    ),
    (
        "rule key absent",
        _call0("param_rules", {"user_id": "exact"}),
        "golden.calls[0].param_rules.user_id",
        "absent",
    ),
    (
        "rule name",
        _call0("param_rules", {"order_id": "fuzzy"}),
        "golden.calls[0].param_rules.order_id",
        "not one of",
    ),
    (
        "fixture id",
        _call0("params", {"order_id": "W449"}),
        "golden.calls[0].params.order_id",
        "not in the fixtures",
    ),
    ("negative type", _set(["negative"], "no"), "negative", "boolean"),
    ("skip without reason", _set(["skip"], True), "skip_reason", "requires a non-empty"),
    ("reason without skip", _set(["skip_reason"], "because"), "skip_reason", "null"),
    (
        "negative with calls",
        _set(["negative"], True),
        "golden.calls",
        "negative case expects no golden calls",
    ),
    (
        "variant differs",
        lambda rows: rows[1]["context"].update(notes="x"),
        "context",
        "differs from",
    ),
    ("category not in spec", _set(["category"], "brand_new"), "category", "not a category of the suite spec"),
]


@pytest.mark.parametrize(("name", "mutate", "field", "reason"), RULES, ids=[r[0] for r in RULES])
def test_each_rule_rejects_a_minimal_violation(tmp_path, name, mutate, field, reason):
    rows = records()
    mutate(rows)
    found = validate_suite(write(tmp_path, rows))
    assert any(v.field == field and reason in v.reason for v in found), [str(v) for v in found]


def test_action_id_must_be_non_empty(tmp_path):
    rows = records()
    chain = next(r for r in rows if r["category"] == "cancel_confirm")
    chain["golden"]["calls"][1]["params"]["action_id"] = ""
    found = validate_suite(write(tmp_path, rows))
    assert any("action_id" in v.field for v in found)


def test_nested_fixture_ids_are_checked(tmp_path):
    rows = records()
    row = next(r for r in rows if r["category"] == "item_list")
    row["golden"]["calls"][0]["params"]["items"][0]["item_id"] = "I9999"
    found = validate_suite(write(tmp_path, rows))
    assert any(v.field.endswith("items[0].item_id") and "fixtures" in v.reason for v in found)


def test_duplicate_id_and_instruction(tmp_path):
    rows = records()
    rows[1]["instruction"] = "  " + rows[0]["instruction"].upper() + " "
    rows.append(dict(rows[0]))
    found = validate_suite(write(tmp_path, rows))
    assert any(v.field == "id" and "duplicate" in v.reason for v in found)
    assert any(v.field == "instruction" and "trim+casefold" in v.reason for v in found)
    assert any(v.field == "suite" and "expected 72 cases, found 73" in v.reason for v in found)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("no newline", "end with a newline"),
        ("blank line", "blank line"),
        ("crlf", "CRLF"),
        ("bad json", "not valid JSON"),
        ("array", "one JSON object"),
    ],
)
def test_file_format_rules(tmp_path, raw, reason):
    text = shipped_suite_path().read_text("utf-8")
    text = {
        "no newline": text.rstrip("\n"),
        "blank line": text.replace("\n", "\n\n", 1),
        "crlf": text.replace("\n", "\r\n", 1),
        "bad json": text.replace("}\n", "\n", 1),
        "array": "[1]\n" + text,
    }[raw]
    found = validate_suite(write(tmp_path, [], raw=text))
    assert any(v.field == "file" and reason in v.reason for v in found)


def test_suite_contract_counts_and_spec(tmp_path):
    rows = records()
    rows[0]["golden"]["calls"] = [{"tool": "get_user", "params": {"user_id": "U101"}}]
    rows[4]["negative"] = True  # user_lookup is not negative
    found = validate_suite(write(tmp_path, rows))
    messages = [str(v) for v in found]
    assert any("tool sequence ['get_user'] != spec ['get_order']" in m for m in messages)
    assert any("expected 12 negative cases, found 13" in m for m in messages)


def test_every_violation_is_reported_with_location(tmp_path):
    rows = records()
    rows[0]["context"]["db_fixture"] = "x"
    rows[40]["golden"]["order_sensitive"] = "x"
    path = write(tmp_path, rows)
    result = cli("cases", "validate", str(path))
    assert result.returncode == 2
    assert f"{path}:1: fc-d1-001: context.db_fixture:" in result.stderr
    assert f"{path}:41: {rows[40]['id']}: golden.order_sensitive:" in result.stderr
    assert "case_validation=failed" in result.stderr


def test_golden_requests_succeed_on_a_fresh_sandbox(retail):
    """Every golden chain replays on the fixtures; confirm/abort use the returned action_id."""
    replayed = 0
    for case in load_cases():
        box = retail.new_sandbox()
        last_action = None
        for call in case.calls:
            params = dict(call.params)
            if "action_id" in params:
                params["action_id"] = last_action
            outcome = box.execute(call.tool, params)
            assert outcome.ok, (case.id, call.tool, outcome.result)
            last_action = outcome.result.get("action_id", last_action)
            replayed += 1
        if case.dimension == "D4":
            assert box.ledger()[0].status in ("confirmed", "aborted"), case.id
    assert replayed == 57 + 18  # 57 cases with golden calls, 18 of them chains of two


def test_refused_return_case_is_about_a_refusal(retail):
    case = next(c for c in load_cases() if c.category == "refused_return_window")
    assert case.negative and not case.calls
    attempt = retail.new_sandbox().execute(
        "request_return",
        {"order_id": "W444", "items": [{"item_id": "I2061", "quantity": 1}], "reason": "damaged"},
    )
    assert attempt.error_type == "precondition_failed"


def test_coverage_doc_is_current(retail):
    expected = coverage_markdown(load_cases(), retail.default_whitelist)
    assert (ROOT / "docs" / "coverage.md").read_text("utf-8") == expected, (
        "docs/coverage.md is stale: run `traceladder cases coverage --output docs/coverage.md`"
    )


def test_input_hashes_bind_every_input(retail):
    from dataclasses import replace

    suite = shipped_suite_path().read_bytes()
    base = input_hashes(suite, retail, {"model": "m", "max_steps": 8})
    assert set(base) == {
        "cases",
        "tool_schemas",
        "fixtures",
        "policy",
        "system_prompt",
        "run_config",
        "inputs",
    }
    assert base == input_hashes(suite, retail, {"max_steps": 8, "model": "m"})
    assert input_hashes(suite + b" ", retail, {"model": "m", "max_steps": 8})["cases"] != base["cases"]
    changed = input_hashes(suite, retail, {"model": "m", "max_steps": 9})
    assert changed["run_config"] != base["run_config"] and changed["inputs"] != base["inputs"]
    prompt = replace(retail, system_prompt=retail.system_prompt + "!")
    assert (
        input_hashes(suite, prompt, {"model": "m", "max_steps": 8})["system_prompt"] != base["system_prompt"]
    )


def test_category_table_matches_the_suite():
    assert len(CATEGORIES) == 24


def test_category_spec_ordering_and_whitelist_are_enforced(tmp_path):
    rows = records()
    chain = [r for r in rows if r["category"] == "cancel_confirm"]
    for r in chain:
        r["golden"]["order_sensitive"] = False
    policy = [r for r in rows if r["category"] == "optional_policy_read"]
    for r in policy:
        r["golden"]["allowed_extra"] = ["get_return_policy", "get_user"]
    found = [str(v) for v in validate_suite(write(tmp_path, rows))]
    assert sum("golden.order_sensitive: spec says True" in m for m in found) == 3
    assert sum("golden.allowed_extra: spec says ('get_return_policy',)" in m for m in found) == 3
