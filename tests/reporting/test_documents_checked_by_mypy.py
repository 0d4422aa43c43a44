"""A renamed or misspelled key of a report document is a mypy error, not a grep (decision 560).

The real mypy, once, on a renderer-sized snippet that reads the documents as `report/documents.py`
types them: each correct read passes, and each wrong one is an error naming its key, on its line.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

READS = """
    first = report["results"][0]
    return (
        report["summary"]["{summary}"],
        first["{result}"],
        baseline["review"]["{review}"],
        comparison["mcnemar"]["{mcnemar}"],
    )
"""
HEAD = """from traceladder.report.documents import BaselineV1, ComparisonV1, ReportV1


def {name}(report: ReportV1, baseline: BaselineV1, comparison: ComparisonV1) -> object:"""
RIGHT = {"summary": "accuracy", "result": "taxonomy", "review": "judge_error", "mcnemar": "p_value"}
WRONG = {"summary": "acuracy", "result": "failure_class", "review": "judge_errors", "mcnemar": "p"}


def test_mypy_names_each_key_a_document_does_not_have_and_passes_the_others(tmp_path):
    right = HEAD.format(name="right") + READS.format(**RIGHT)
    wrong = HEAD.format(name="wrong").split("\n")[-1] + READS.format(**WRONG)
    text = right + "\n\n" + wrong
    source = tmp_path / "renderer.py"
    source.write_text(text, encoding="utf-8")
    # --no-site-packages: the documents read only `typing` and our own modules (found from the working
    # directory, the repository); the installed packages' typed sources (openai, pydantic, ...) that
    # our other modules import were most of mypy's time here (8.7 CPU-s of 9.3) and none of its
    # verdict. A document type mypy cannot resolve would make every read pass and fail this test.
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-site-packages",
         "--cache-dir", str(tmp_path / "cache"),
         "--config-file", str(ROOT / "pyproject.toml"), str(source)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    errors = {
        int(n): key
        for n, key in re.findall(r"renderer\.py:(\d+): error: .*has no key \"(\w+)\"", done.stdout)
    }
    lines = text.split("\n")
    expected = {i + 1: key for i, line in enumerate(lines) for key in WRONG.values() if f'["{key}"]' in line}
    assert errors == expected, done.stdout
    assert len(re.findall(r": error:", done.stdout)) == len(WRONG), done.stdout
