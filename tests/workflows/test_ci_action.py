"""CI for a real model (issue 25, point 4): `baseline init` and the composite action `action.yml`.

The action's `run:` steps are executed here exactly as written — bash -eo pipefail, as GitHub
runs `shell: bash` — with inputs reaching them through `env:` only, GITHUB_OUTPUT (one file per
step) and GITHUB_STEP_SUMMARY as temp files, and `if:` conditions evaluated with GitHub's rule
(no status function means `success() && …`). `uses:` steps cannot run locally; the test checks
that what they would upload exists. The model is sim:faulty on four cases, gated against a
baseline locked with `baseline init` and the `baseline lock` command it printed."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, cli, rows

CASES = ["fc-d1-002", "fc-d1-005", "fc-d2-005", "fc-d4-003"]  # seed 0: two FAIL, two PASS
CASE_ARGS = [a for c in CASES for a in ("--case", c)]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def _kv(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if re.match(r"^[a-z_]+=", line))


def _lock_command(next_line: str) -> list[str]:
    """The `baseline lock` command the last line of `baseline init` names, as argv."""
    assert next_line.startswith("next: ") and "\n" not in next_line
    command = shlex.split(re.split(r"(?:then|lock it): ", next_line, maxsplit=1)[1])
    assert command[:3] == ["traceladder", "baseline", "lock"]
    return command[1:]


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    """`baseline init` (three sim:faulty runs), the review classified, locked as it said.

    The lock is part of the fixture, not of the first test: every test of this module may run in
    another xdist worker (worksteal moves tests), where the fixture is built anew."""
    folder = tmp_path_factory.mktemp("init")
    db = folder / "store.duckdb"
    done = cli(
        "baseline", "init", "--model", "sim:faulty", *CASE_ARGS, "--db", str(db), "--dir", "eval", cwd=folder
    )
    assert done.returncode == 0, done.stderr
    review = json.loads((folder / "eval" / "review.json").read_text())
    # Classify as the last line says, then run exactly the command it gave.
    for item in review["reviews"]:
        item["classification"] = "model_error"
    (folder / "eval" / "review.json").write_text(json.dumps(review))
    lock = cli(*_lock_command(done.stdout.strip().splitlines()[-1]), cwd=folder)
    return folder, db, done, lock


def test_baseline_init_runs_writes_and_says_what_to_review(locked):
    folder, db, done, lock = locked
    said = _kv(done.stdout)
    run_ids = said["run_ids"].split(",")
    assert len(run_ids) == 3
    stored = rows(db, "SELECT run_id, status, cases_total, config FROM runs ORDER BY started_at")
    assert [r[0] for r in stored] == run_ids and all(r[1] == "complete" and r[2] == 4 for r in stored)
    seeds = [json.loads(r[3])["sim_seed"] for r in stored]
    assert seeds == [0, 1, 2]  # the simulator's sampling noise: run i uses seed i
    consistency = json.loads((folder / "eval" / "consistency.json").read_text())
    assert consistency["runs"] == run_ids and consistency["trials_per_case"] == 3
    review = json.loads((folder / "eval" / "review.json").read_text())
    fails = rows(
        db, f"SELECT count(*) FROM trace_results WHERE run_id = '{run_ids[0]}' AND verdict = 'FAIL'"
    )[0][0]
    assert review["run_id"] == run_ids[0] and len(review["reviews"]) == fails == 2
    assert said["review_path"] == "eval/review.json fails=2"
    last = done.stdout.strip().splitlines()[-1]
    assert "eval/review.json" in last and "model_error, judge_error, golden_error" in last
    assert lock.returncode == 0, lock.stderr  # the fixture ran the command that line gave
    assert (folder / "eval" / "baseline.json").exists() and "baseline_sha256=" in lock.stdout


def test_baseline_init_refuses_before_running(locked, tmp_path):
    folder, db, _, _ = locked
    before = rows(db, "SELECT count(*) FROM runs")[0][0]
    again = cli(
        "baseline", "init", "--model", "sim:faulty", *CASE_ARGS, "--db", str(db), "--dir", "eval", cwd=folder
    )
    assert again.returncode == 2 and "eval/review.json already exists" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert rows(db, "SELECT count(*) FROM runs")[0][0] == before  # refused before any run
    two = cli("baseline", "init", "--runs", "2", "--db", str(tmp_path / "x.duckdb"), cwd=tmp_path)
    assert two.returncode == 2 and "outside 3..20" in two.stderr
    unknown = cli("baseline", "init", "--case", "fc-d1-999", "--db", str(tmp_path / "x.duckdb"), cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown case fc-d1-999" in unknown.stderr


def test_baseline_init_with_nothing_to_review_locks_at_once(tmp_path):
    done = cli(
        "baseline", "init", "--model", "sim:oracle", "--case", "fc-d1-005", "--db", "s.duckdb", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("next: nothing to review")
    lock = cli(*_lock_command(last), cwd=tmp_path)
    assert lock.returncode == 0, lock.stderr


# -- the composite action, executed ----------------------------------------------------------


def _expand(text: str, values: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    def one(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        if expr.startswith("inputs."):
            return values[expr[len("inputs.") :]]
        step, _, name = expr[len("steps.") :].partition(".outputs.")
        return outputs.get(step, {}).get(name, "")

    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def _condition(expr: str | None, values, outcomes, failed: bool) -> bool:
    """GitHub's `if:` for the expressions action.yml uses: &&, ==, !=, strings, inputs.*,
    steps.*.outcome, always(); without a status function, `success() &&` is implied."""
    if expr is None:
        return not failed
    py = expr.replace("&&", " and ").replace("||", " or ").replace("always()", "True")
    py = re.sub(r"inputs\.([\w-]+)", lambda m: repr(values[m.group(1)]), py)
    py = re.sub(r"steps\.([\w-]+)\.outcome", lambda m: repr(outcomes.get(m.group(1), "skipped")), py)
    result = bool(eval(py, {"__builtins__": {}}))  # only the trusted action.yml's own expressions
    return result if "always()" in expr else result and not failed


def run_action(workspace: Path, inputs: dict[str, str]):
    spec = ACTION["inputs"]
    values = {name: str(item.get("default", "")) for name, item in spec.items()} | inputs
    assert all(values[n] for n, item in spec.items() if item.get("required")), "a required input is missing"
    summary = workspace / "step-summary.md"
    outputs: dict[str, dict[str, str]] = {}
    outcomes: dict[str, str] = {}
    uploads, ran, failed = [], [], False
    for i, step in enumerate(ACTION["runs"]["steps"]):
        step_id = step.get("id", f"step{i}")
        if not _condition(step.get("if"), values, outcomes, failed):
            outcomes[step_id] = "skipped"
            continue
        if "uses" in step:
            uploads.append(
                (step["uses"], {k: _expand(str(v), values, outputs) for k, v in step["with"].items()})
            )
            continue
        assert step["shell"] == "bash" and "${{" not in step["run"], "inputs reach scripts only through env"
        output_file = workspace / f"output-{step_id}"
        output_file.write_text("")
        env = {**os.environ, **{k: _expand(str(v), values, outputs) for k, v in step.get("env", {}).items()}}
        env.update(GITHUB_OUTPUT=str(output_file), GITHUB_STEP_SUMMARY=str(summary), GITHUB_ACTION_PATH=str(ROOT),
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # fmt: skip
        env.pop("OPENAI_API_KEY", None)
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              env=env, cwd=workspace, capture_output=True, text=True, timeout=600)  # fmt: skip
        ran.append((step["name"], done.returncode, done.stderr))
        outcomes[step_id] = "success" if done.returncode == 0 else "failure"
        failed = failed or done.returncode != 0
        outputs[step_id] = _kv(output_file.read_text())
    action_outputs = {n: _expand(o["value"], values, outputs) for n, o in ACTION["outputs"].items()}
    text = summary.read_text() if summary.exists() else ""
    return {"ran": ran, "outcomes": outcomes, "outputs": action_outputs, "uploads": uploads, "summary": text,
            "failed": failed}  # fmt: skip


def _inputs(locked, **more):
    folder, _, _, _ = locked
    return {"model": "sim:faulty", "baseline": str(folder / "eval" / "baseline.json"), "install": "",
            "run-args": " ".join(CASE_ARGS), **more}  # fmt: skip


def test_action_declares_a_composite_with_the_upload(locked):
    assert ACTION["runs"]["using"] == "composite"
    upload = [s for s in ACTION["runs"]["steps"] if "uses" in s]
    assert [s["uses"] for s in upload] == ["actions/upload-artifact@v4"] and upload[0]["if"] == "always()"
    assert upload[0]["with"]["path"] == "${{ inputs.reports-dir }}"


def test_action_runs_gates_and_uploads_for_a_comparable_run(locked, tmp_path):
    result = run_action(tmp_path, _inputs(locked))
    assert not result["failed"], result["ran"]
    assert [name for name, _, _ in result["ran"]] == [
        "Run the suite", "Gate against the baseline", "HTML and JSON report", "Point the job summary at the artifact",
    ]  # fmt: skip
    out = result["outputs"]
    stored = rows(tmp_path / "traceladder-ci.duckdb", "SELECT run_id FROM runs")
    assert out["gate"] == "passed" and [(out["run-id"],)] == stored and out["pass-rate"] == "0.5000"
    reports = tmp_path / "traceladder-reports"
    assert Path(tmp_path, out["html-path"]) == reports / "report.html" and (reports / "report.html").exists()
    junit = ET.parse(reports / "junit.xml").getroot()
    assert len(junit.findall(".//testcase")) == 4 and len(junit.findall(".//failure")) == 2
    assert (reports / "report.json").exists()
    assert "✅ traceladder gate" in result["summary"] and "artifact `traceladder-report`" in result["summary"]
    assert result["uploads"] == [("actions/upload-artifact@v4", {"name": "traceladder-report",
                                  "path": "traceladder-reports", "if-no-files-found": "warn"})]  # fmt: skip


def test_action_fails_the_job_but_still_uploads_the_report(locked, tmp_path):
    result = run_action(tmp_path, _inputs(locked, **{"min-pass-rate": "0.9"}))
    assert result["failed"] and result["outcomes"]["gate"] == "failure"
    gate = next(r for r in result["ran"] if r[0] == "Gate against the baseline")
    assert gate[1] == 1 and "is below the minimum 90.0%" in gate[2]
    assert result["outputs"]["gate"] == "failed"
    assert (
        result["outcomes"]["html"] == "success"
        and (tmp_path / "traceladder-reports" / "report.html").exists()
    )
    assert result["uploads"] and "❌ traceladder gate" in result["summary"]


def test_action_says_not_comparable_for_another_model(locked, tmp_path):
    result = run_action(tmp_path, _inputs(locked, model="sim:oracle"))
    gate = next(r for r in result["ran"] if r[0] == "Gate against the baseline")
    assert gate[1] == 2 and "not comparable" in gate[2] and result["outputs"]["gate"] == "not_comparable"
    assert "⚠️ traceladder gate" in result["summary"] and result["uploads"]


def test_gate_outputs_and_a_bad_github_output_path(locked, tmp_path):
    folder, db, _, _ = locked
    out = tmp_path / "out"
    done = cli("gate", "--db", str(db), "--min-pass-rate", "0.1", env={"GITHUB_OUTPUT": str(out)})
    assert done.returncode == 0, done.stderr
    said = _kv(out.read_text())
    latest = rows(db, "SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1")[0][0]
    passed, scored = rows(db, "SELECT count(*) FILTER (WHERE verdict = 'PASS'), count(*) FILTER (WHERE verdict "
                              f"IN ('PASS', 'FAIL')) FROM trace_results WHERE run_id = '{latest}'")[0]  # fmt: skip
    assert said == {"run_id": latest, "pass_rate": f"{passed / scored:.4f}", "gate": "passed"}
    for bad in (str(tmp_path), str(tmp_path / "no" / "such" / "out")):
        refused = cli("gate", "--db", str(db), "--min-pass-rate", "0.1", env={"GITHUB_OUTPUT": bad})
        assert refused.returncode == 2 and "GITHUB_OUTPUT" in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
