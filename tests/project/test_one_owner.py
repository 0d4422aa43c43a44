"""One owner per fact: each of these words, names and numbers is spelled in exactly one module and
imported everywhere else, so a change is one edit and two copies can never disagree."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import traceladder

PACKAGE = Path(traceladder.__file__).parent


def _constants(path: Path) -> list[tuple[int, object]]:
    """Every literal constant of a module outside docstrings, with its line."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and id(node) not in docstrings
    ]


def _spelled_outside(owner: str, words: set[object]) -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == owner:
            continue
        found += [f"{rel}:{line} {value!r}" for line, value in _constants(path) if value in words]
    return found


def test_verdict_words_are_spelled_only_by_their_owner():
    from traceladder.evaluate.rungs.types import VerdictValue

    words = {v.value for v in VerdictValue}
    assert _spelled_outside("evaluate/rungs/types.py", words) == []


def test_verdicts_are_their_strings_in_json_and_comparisons():
    # A StrEnum: rows, reports and SQL filters read the same words as before.
    from traceladder.evaluate.rungs.types import SCORED, VERDICTS, VerdictValue

    assert json.dumps({VerdictValue.PASS: VerdictValue.FAIL}) == '{"PASS": "FAIL"}'
    assert VerdictValue.AGENT_ERROR == "AGENT_ERROR" and f"{VerdictValue.SKIP}" == "SKIP"
    assert VERDICTS == ("PASS", "FAIL", "SKIP", "AGENT_ERROR", "NOT_EVALUATED")
    assert SCORED == ("PASS", "FAIL")


def test_no_module_compares_with_a_rung_name_it_typed():
    # `r["name"] == "call_match"`: renderers ask the rung modules for their names instead.
    from traceladder.evaluate.rungs.ladder import BUILTIN

    names = {rung.NAME for rung in BUILTIN}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                found += [f"{path.name}:{node.lineno}" for side in sides
                          if isinstance(side, ast.Constant) and side.value in names]  # fmt: skip
    assert found == []
    html_data = (PACKAGE / "report" / "html_data.py").read_text()
    assert "PLANNED_JUDGE_RUNG" not in html_data and "not built" not in html_data


def test_commands_return_named_exit_codes():
    # No `return 2` in a command: which exit a failure gets is read from the one table.
    literal = []
    for path in sorted((PACKAGE / "cli").glob("*.py")) + [PACKAGE / "receive" / "serve" / "server.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Return) and node.value is not None:
                values = [node.value]
                if isinstance(node.value, ast.IfExp):
                    values = [node.value.body, node.value.orelse]
                literal += [f"{path.name}:{node.lineno}" for v in values
                            if isinstance(v, ast.Constant) and isinstance(v.value, int)]  # fmt: skip
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "SystemExit":
                literal += [f"{path.name}:{node.lineno}" for a in node.args if isinstance(a, ast.Constant)]
    assert literal == []


def test_the_exit_code_table_is_rendered_into_the_cli_reference():
    from traceladder.cli.docs import render_cli_docs
    from traceladder.errors import EXIT_CODE_TABLE, ExitCode

    docs = render_cli_docs()
    for codes, meaning in EXIT_CODE_TABLE:
        assert f"| {' / '.join(str(int(c)) for c in codes)} | {meaning} |" in docs
    assert {c for codes, _ in EXIT_CODE_TABLE for c in codes} == set(ExitCode)


def test_every_genai_attribute_name_comes_from_semconv():
    # The OTel GenAI names (and our own traceladder.* ones) are declared once, in the
    # instrumentation's semconv; a foreign convention's own names stay in its convention module.
    from traceladder.instrumentation import semconv

    names = {v for k, v in vars(semconv).items() if k.isupper() and isinstance(v, str) and "." in v}
    spelled = _spelled_outside("instrumentation/semconv.py", names)
    # the conventions' entry-point group shares its spelling with an attribute, not its meaning
    assert [s for s in spelled if not s.startswith("extract/conventions/registry.py")] == []
    assert not [s for s in spelled if "'gen_ai." in s]


def _store_tables(tmp_path) -> set[str]:
    """Every table and view a new store has, so a table a migration adds is guarded too."""
    from traceladder.store.db import open_store

    with open_store(tmp_path / "tables.duckdb") as store:
        return {r[0] for r in store.fetchall("SELECT table_name FROM information_schema.tables")}


# What only looks like SQL on a table: the example in `traceladder sql`'s own help.
_NOT_SQL = {("cli/sql_cmd.py", "one SQL statement, e.g. ")}


def test_sql_on_every_table_lives_in_storage(tmp_path):
    # Only storage spells SQL on the store's tables (the runner records runs and case runs through
    # storage.runs, watch its watermark through storage.watch_state, …); a hint telling the user
    # which `traceladder sql` to run is prose, not a query.
    import re

    tables = _store_tables(tmp_path)
    assert {"runs", "case_runs", "spans", "traces", "trace_results", "watch_state", "trend_by_day"} <= tables
    names = "|".join(sorted(map(re.escape, tables)))
    sql = re.compile(rf"\b(FROM|INTO|UPDATE|JOIN|TABLE)\s+({names})\b")
    found = [
        f"{path.relative_to(PACKAGE)}:{line} {value[:50]!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "store"
        for line, value in _constants(path)
        if isinstance(value, str) and sql.search(value) and "traceladder sql" not in value
        and not any(path.relative_to(PACKAGE).as_posix() == f and value.startswith(v) for f, v in _NOT_SQL)
    ]  # fmt: skip
    assert found == []


def test_sampling_is_recorded_by_one_function():
    found = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, value in _constants(path)
        if isinstance(value, str) and "INSERT INTO sampling" in value
    ]
    assert [f.split(":")[0] for f in found] == ["store/sampling_log.py"]


def test_every_renderer_names_a_result_with_one_function():
    from traceladder.report.build import result_name

    trace = {"case_id": None, "trace_id": "ab" * 16, "repeat_index": 0}
    assert result_name(trace) == "ab" * 8 and result_name(trace, trace_chars=None) == "ab" * 16
    assert result_name({"case_id": "fc-d1-002", "trace_id": "x", "repeat_index": 1}) == "fc-d1-002#1"
    # no renderer builds the name itself (slicing the trace id, appending the repeat)
    spelled = []
    for path in sorted((PACKAGE / "report").glob("*.py")):
        if path.name == "build.py":
            continue
        text = path.read_text()
        spelled += [path.name for needle in ('["trace_id"][:', "#{r['repeat_index']}", "#{case['repeat_index']}")
                    if needle in text]  # fmt: skip
    assert spelled == []
