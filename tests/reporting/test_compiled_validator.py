"""The compiled validator a report's results are accepted by (decision 431) gives jsonschema's
verdict: on every result of a real run on the simulator, and on each of those broken in every
way one edit can break it — an unknown key at any depth, any value replaced by one of another
type, any required key removed. A report is refused exactly when the reference refuses it, with
the reference's words."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import cli

from traceladder.schemas import (
    SchemaViolation,
    compiled,
    part_validator,
    require_valid,
    require_valid_part,
    validator,
)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("compiled") / "run.duckdb"
    assert cli("run", "--db", str(db), "--model", "sim:faulty").returncode == 0
    out = db.with_suffix(".json")
    done = cli("report", "--db", str(db), "--format", "json", "--out", str(out))
    assert done.returncode == 0, done.stderr
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


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
    for other in ("text", 7, 0.5, None, True, [], {}):
        if type(other) is not type(doc):
            yield path, "replace", other


def _edited(doc: Any, path: tuple[Any, ...], edit: str, value: Any) -> Any:
    out = copy.deepcopy(doc)
    if edit == "replace" and not path:
        return value
    parent = out
    for step in path[:-1] if edit == "replace" else path:
        parent = parent[step]
    if edit == "replace":
        parent[path[-1]] = value
    elif edit == "add":
        parent[value[0]] = value[1]
    else:
        del parent[value]
    return out


def test_every_result_and_every_one_edit_break_get_the_reference_verdict(report):
    reference, fast = part_validator("ReportV1", "result"), compiled("ReportV1", "result")
    seen, rejected, distinct = 0, 0, set()
    for result in report["results"]:
        shape = json.dumps(result, sort_keys=True)
        if shape in distinct:
            continue
        distinct.add(shape)
        assert fast(result) and reference.is_valid(result)
        for path, edit, value in _edits(result):
            edited = _edited(result, path, edit, value)
            valid = reference.is_valid(edited)
            assert fast(edited) == valid, (path, edit, value)
            seen, rejected = seen + 1, rejected + (not valid)
    assert seen > 1_000 and rejected > seen // 3, (seen, rejected)


def test_the_whole_document_gets_the_reference_verdict(report):
    head = {**report, "results": report["results"][:3]}
    reference, fast = validator("ReportV1"), compiled("ReportV1")
    assert fast(head) and reference.is_valid(head)
    for path, edit, value in _edits({k: v for k, v in head.items() if k != "results"}):
        edited = _edited(head, path, edit, value)
        assert fast(edited) == reference.is_valid(edited), (path, edit, value)


def test_a_refused_result_is_named_in_the_references_words(report):
    broken = dict(report["results"][0], verdict="MAYBE")
    with pytest.raises(SchemaViolation, match=r"results/4/verdict: 'MAYBE' is not one of"):
        require_valid_part("ReportV1", "result", broken, "results/4")
    with pytest.raises(SchemaViolation, match="refusing to write an invalid ReportV1"):
        require_valid("ReportV1", {**report, "results": [broken]})
