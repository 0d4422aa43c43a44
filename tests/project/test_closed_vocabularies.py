"""The closed vocabularies have one owner each, and everything that spells their words agrees.

- Failure codes: `evaluate.rungs.classes.FailureCode`. Every code-shaped string the built-in rungs
  write is a member (a plug-in rung may add its own; the built-ins may not invent one in passing).
- Judge outcomes: `evaluate.judge.outcome.JudgeOutcome`. The SQL counting rung 5's figures reads exactly
  its words, and every one of them.
- Rung statuses: `evaluate.rungs.types.RungStatus` (a `Literal`, decision 562) is the published
  schema's enum.
"""

from __future__ import annotations

import ast
import json
import re
import typing
from pathlib import Path

from traceladder.evaluate.judge.outcome import CHARGED, JudgeOutcome
from traceladder.evaluate.rungs.classes import PRIORITY, FailureCode
from traceladder.evaluate.rungs.types import RungStatus, VerdictValue

ROOT = Path(__file__).resolve().parents[2]
CODE_SHAPED = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{4,}")
# Upper-case strings in evaluators/ that are not failure codes: names listed in `__all__` and a
# schema rung's sentinel for "this tool declares no schema".
NOT_CODES = {"EVALUATOR_VERSION", "VERDICTS", "NAME", "NO_SCHEMA"}


def _strings(path: Path) -> set[str]:
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_every_code_the_built_in_rungs_write_is_a_failure_code():
    written = {
        s
        for path in (ROOT / "traceladder" / "evaluate" / "rungs").glob("*.py")
        for s in _strings(path)
        if CODE_SHAPED.fullmatch(s)
    }
    verdicts = {v.value for v in VerdictValue}
    assert written - verdicts - NOT_CODES == {c.value for c in FailureCode}


def test_failure_codes_are_their_own_strings_in_priority_order():
    assert tuple(FailureCode) == PRIORITY
    assert all(code == code.name for code in FailureCode)  # stored and written exactly as before
    assert json.dumps([FailureCode.PARAM_WRONG_FORMAT]) == '["PARAM_WRONG_FORMAT"]'


def _sql_outcomes() -> set[str]:
    text = (ROOT / "traceladder" / "store" / "report_summary.py").read_text(encoding="utf-8")
    sql = text[text.index("_JUDGMENTS = ") : text.index('"""', text.index("_JUDGMENTS = ") + 20)]
    return set(re.findall(r"'([a-z_]+)'", sql))


def test_the_rung_5_figures_count_exactly_the_judge_outcomes():
    assert _sql_outcomes() == {o.value for o in JudgeOutcome}


def test_the_judge_phase_spells_each_outcome_through_the_enum():
    # the rows of rung 5 are built in `evaluate/judge/phase_rows.py` (decision 573 split them from the phase)
    tree = ast.parse(
        (ROOT / "traceladder" / "evaluate" / "judge" / "phase_rows.py").read_text(encoding="utf-8")
    )
    outcomes = [
        ast.unparse(value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values, strict=True)
        if isinstance(key, ast.Constant) and key.value == "outcome"
    ]
    assert outcomes and all(o.startswith("JudgeOutcome.") for o in outcomes), outcomes
    assert set(CHARGED) == {JudgeOutcome.JUDGED, JudgeOutcome.ERROR}


def test_rung_statuses_are_the_published_schemas_enum():
    schema = json.loads(
        (ROOT / "traceladder" / "schemas" / "report-v1.schema.json").read_text(encoding="utf-8")
    )
    assert list(typing.get_args(RungStatus)) == schema["$defs"]["rung"]["properties"]["status"]["enum"]
