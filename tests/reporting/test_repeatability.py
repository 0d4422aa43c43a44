"""Whether runs repeat one configuration is one rule (`report.repeatability`): a consistency
record and a baseline lock ask it and give the same reason for the same runs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from conftest import cli


@dataclass(frozen=True)
class _Run:
    run_id: str
    model: str = "m"
    input_hashes: dict[str, str] = field(default_factory=lambda: {"cases": "c"})
    selection: dict[str, Any] = field(default_factory=lambda: {"case_ids": ["a"], "repeat": 1})
    complete: bool = True

    def incompleteness(self) -> str:
        return "" if self.complete else f"run {self.run_id} is interrupted"


def test_the_first_difference_is_the_answer_in_one_order():
    from traceladder.report.repeatability import listed_twice, not_repeated

    assert listed_twice(["b", "a", "b", "a"]) == "a" and listed_twice(["a", "b"]) is None
    assert not_repeated([_Run("a"), _Run("b")]) is None
    late = not_repeated([_Run("a"), _Run("b", complete=False)])
    assert late is not None and late.kind == "incomplete" and late.incompleteness == "run b is interrupted"
    # a selection differs before inputs are compared, whatever else differs
    both = not_repeated([_Run("a"), _Run("b", model="n", selection={"case_ids": ["z"], "repeat": 1})])
    assert both is not None and (both.kind, both.first, both.other) == ("selection", "a", "b")
    # a hash only the later run has is a difference too
    extra = not_repeated([_Run("a"), _Run("b", model="n", input_hashes={"cases": "c", "policy": "p"})])
    assert extra is not None and extra.kind == "inputs" and extra.differing == ("model", "policy")


def _run(db, *args: str) -> str:
    result = cli("run", "--db", str(db), *args)
    assert result.returncode == 0, result.stderr
    return next(line.split("=", 1)[1] for line in result.stdout.splitlines() if line.startswith("run_id="))


def test_consistency_and_lock_refuse_the_same_runs_for_the_same_reason(tmp_path):
    db = tmp_path / "s.duckdb"
    a = _run(db, "--case", "fc-d1-001", "--model", "sim:oracle")
    b = _run(db, "--case", "fc-d1-001", "--model", "sim:oracle")
    c = _run(db, "--case", "fc-d1-002", "--model", "sim:faulty")  # another selection and model
    consistency = cli("consistency", a, b, c, "--db", str(db))
    assert consistency.returncode == 2 and "different selections" in consistency.stderr
    record = tmp_path / "c.json"
    record.write_text(json.dumps({"runs": [a, b, c], "per_case": {}}))
    review = tmp_path / "r.json"
    assert cli("baseline", "review-template", a, "--db", str(db), "--output", str(review)).returncode == 0
    lock = cli(
        "baseline", "lock", "--canonical", a, "--consistency", str(record), "--review", str(review),
        "--output", str(tmp_path / "b.json"), "--db", str(db),
    )  # fmt: skip
    assert lock.returncode == 2 and "different selections" in lock.stderr, lock.stderr
    assert not (tmp_path / "b.json").exists()
