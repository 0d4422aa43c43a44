"""The compiled validator a report's results are accepted by (decision 431) gives jsonschema's
verdict: on every result of a real run on the simulator, and on each of those broken in every
way one edit can break it — an unknown key at any depth, any value replaced by one of another
type, any required key removed. A report is refused exactly when the reference refuses it, with
the reference's words.

The edits are made on one result of each *shape* (decision 680): results equal but for the text
of strings the schema does not name and the value of numbers outside arrays give both validators
the same edited documents but for those values, and an edit never reads them — it replaces a
value by one of another type, adds a key or removes one. What the schema's conditions read (the
verdict, a rung's status, a warning's kind) and what `uniqueItems` compares (an array's numbers)
are kept in the shape. Every result itself is still checked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import cli_in_process

from traceladder.schemas import (
    SchemaViolation,
    compiled,
    part_validator,
    require_valid,
    require_valid_part,
    schema_text,
    validator,
)

OTHERS: tuple[Any, ...] = ("text", 7, 0.5, None, True, [], {})


@pytest.fixture(scope="module")
def report(faulty_suite, tmp_path_factory) -> dict[str, Any]:
    """The JSON report of the session's shared run (sim:faulty, seed 0, all 72 cases)."""
    db, _ = faulty_suite
    out = tmp_path_factory.mktemp("compiled") / "run.json"
    done = cli_in_process("report", "--db", str(db), "--format", "json", "--out", str(out))
    assert done.returncode == 0, done.stderr
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def _named_strings(schema: Any) -> set[str]:
    """Every string the schema names as a value (`enum`, `const`): what its conditions read."""
    named: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "enum":
                named |= {v for v in value if isinstance(v, str)}
            elif key == "const" and isinstance(value, str):
                named.add(value)
            named |= _named_strings(value)
    elif isinstance(schema, list):
        for value in schema:
            named |= _named_strings(value)
    return named


def _shape(doc: Any, named: set[str], in_array: bool = False) -> Any:
    """`doc` with each string the schema does not name, and each number that is not an array's
    item, replaced by its type. An array's numbers keep their values: `uniqueItems` compares them
    (a quirk's steps), so an edit's verdict can depend on them."""
    if isinstance(doc, dict):
        return {key: _shape(value, named) for key, value in doc.items()}
    if isinstance(doc, list):
        return [_shape(value, named, in_array=True) for value in doc]
    if isinstance(doc, str):
        return doc if doc in named else "<str>"
    if isinstance(doc, bool) or doc is None or in_array:
        return doc
    return f"<{type(doc).__name__}>"


def _edits(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str, Any]]:
    """(path, edit, value) for every single edit of `doc`: at each object an unknown key and each
    key removed; at each value, values of other JSON types."""
    if isinstance(doc, dict):
        yield path, "add", ("zz_unknown", 1)
        for key, value in doc.items():
            yield path, "remove", key
            yield from _edits(value, (*path, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _edits(value, (*path, i))
    for other in OTHERS:
        if type(other) is not type(doc):
            yield path, "replace", other


def _verdicts(doc: Any, path: tuple[Any, ...], edit: str, value: Any, judge: Any) -> Any:
    """`judge(edited)` for `doc` with the one edit applied; `doc` is restored before returning
    (the edit is made in place and undone: a copy of the document per edit cost more than both
    validators)."""
    if edit == "replace" and not path:
        return judge(value)
    parent = doc
    for step in path[:-1] if edit == "replace" else path:
        parent = parent[step]
    if edit == "remove":
        keys = list(parent)
        removed = parent.pop(value)
        try:
            return judge(doc)
        finally:
            parent[value] = removed
            for key in keys:  # the key's place is restored too: the next edit sees the same order
                parent[key] = parent.pop(key)
    if edit == "add":
        parent[value[0]] = value[1]
        try:
            return judge(doc)
        finally:
            del parent[value[0]]
    was = parent[path[-1]]
    parent[path[-1]] = value
    try:
        return judge(doc)
    finally:
        parent[path[-1]] = was


def test_every_result_and_every_one_edit_break_get_the_reference_verdict(report):
    reference, fast = part_validator("ReportV1", "result"), compiled("ReportV1", "result")
    named = _named_strings(json.loads(schema_text("ReportV1"))) | {v for v in OTHERS if isinstance(v, str)}
    seen, rejected, shapes = 0, 0, set()
    for result in report["results"]:
        assert fast(result) and reference.is_valid(result)
        shape = json.dumps(_shape(result, named), sort_keys=True)
        if shape in shapes:
            continue
        shapes.add(shape)
        before = json.dumps(result)
        for path, edit, value in list(_edits(result)):
            fast_says, valid = _verdicts(
                result, path, edit, value, lambda d: (fast(d), reference.is_valid(d))
            )
            assert fast_says == valid, (path, edit, value)
            seen, rejected = seen + 1, rejected + (not valid)
        assert json.dumps(result) == before  # every edit was undone
    assert len(shapes) > 10 and seen > 1_000 and rejected > seen // 3, (len(shapes), seen, rejected)


def test_the_whole_document_gets_the_reference_verdict(report):
    # one result makes the document whole; the results' own edits are the test above's subject
    head = {**report, "results": report["results"][:1]}
    reference, fast = validator("ReportV1"), compiled("ReportV1")
    assert fast(head) and reference.is_valid(head)
    top = {k: v for k, v in head.items() if k != "results"}
    for path, edit, value in list(_edits(top)):
        fast_says, valid = _verdicts(head, path, edit, value, lambda d: (fast(d), reference.is_valid(d)))
        assert fast_says == valid, (path, edit, value)


def test_a_refused_result_is_named_in_the_references_words(report):
    broken = dict(report["results"][0], verdict="MAYBE")
    with pytest.raises(SchemaViolation, match=r"results/4/verdict: 'MAYBE' is not one of"):
        require_valid_part("ReportV1", "result", broken, "results/4")
    with pytest.raises(SchemaViolation, match="refusing to write an invalid ReportV1"):
        require_valid("ReportV1", {**report, "results": [broken]})
