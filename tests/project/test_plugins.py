"""Plug-ins are real (issue 10): a second domain and an extra rung, each registered through an
entry point the way an installed package would be, run through the real CLI — with no change to
traceladder's code, storage or migrations."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT, cli, out_value

CALENDAR = str(ROOT / "tests" / "plugins" / "calendar")
TOY_RUNG = str(ROOT / "tests" / "plugins" / "toy_rung")


def with_plugin(path: str) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(p for p in (path, os.environ.get("PYTHONPATH", "")) if p)}


def sql_json(db, query, env):
    result = cli("sql", query, "--db", str(db), "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_second_domain_runs_run_evaluate_report_gate_sql(tmp_path):
    env = with_plugin(CALENDAR)
    listed = cli("domain", "list", env=env)
    assert re.search(r"^calendar\ttraceladder_calendar:load_domain$", listed.stdout, re.M)
    for argv in (
        ["domain", "validate", "--domain", "calendar"],
        ["cases", "validate", "--domain", "calendar"],
    ):
        result = cli(*argv, env=env)
        assert result.returncode == 0, result.stderr
    db = tmp_path / "cal.duckdb"
    oracle = cli("run", "--domain", "calendar", "--model", "sim:oracle", "--db", str(db), env=env)
    assert oracle.returncode == 0, oracle.stderr
    faulty = cli(
        "run", "--domain", "calendar", "--model", "sim:faulty", "--seed", "3", "--db", str(db), env=env
    )
    assert faulty.returncode == 0, faulty.stderr
    oracle_run, faulty_run = out_value(oracle, "run_id"), out_value(faulty, "run_id")
    assert cli("evaluate", "--db", str(db), env=env).returncode == 0

    report = json.loads(cli("report", oracle_run, "--db", str(db), "--format", "json", env=env).stdout)
    assert report["run"]["domain"] == "calendar"
    assert report["summary"]["verdict_counts"] == {"PASS": 6, "FAIL": 0, "SKIP": 0, "AGENT_ERROR": 0}
    assert list(report["summary"]["dimensions"]) == ["D1", "D2"]  # the domain's own dimensions
    chain = next(r for r in report["results"] if r["case_id"] == "cal-d2-001")
    assert [c["tool"] for c in chain["actual"]] == ["request_booking", "confirm_booking"]

    gate = cli("gate", "--db", str(db), "--run", oracle_run, "--min-pass-rate", "1.0", env=env)
    assert gate.returncode == 0, gate.stderr
    labels = sql_json(db, f"SELECT cr.expected_label->>'verdict' AS want, r.verdict AS got FROM case_runs cr "
                          f"JOIN results r USING (trace_id) WHERE r.run_id = '{faulty_run}'", env)  # fmt: skip
    assert labels and all(row["want"] == row["got"] for row in labels)
    rows = sql_json(db, "SELECT DISTINCT domain FROM runs", env)
    assert rows == [{"domain": "calendar"}]


def test_a_chain_link_comes_from_the_domain(tmp_path, monkeypatch):
    """The calendar's confirmation carries `booking_id`, not retail's `action_id`: a confirm that
    names another booking is CHAIN_BROKEN by the domain's own chain semantics."""
    monkeypatch.syspath_prepend(CALENDAR)
    import traceladder_calendar

    from traceladder.produce.agent.sim.plans import faulty_plan
    from traceladder.suite.cases import load_cases

    domain = traceladder_calendar.load_domain()
    case = next(c for c in load_cases(domain) if c.id == "cal-d2-001")
    seed = next(s for s in range(500) if faulty_plan(case, domain, s).label["fault"] == "broken_chain")
    env = with_plugin(CALENDAR)
    db = tmp_path / "chain.duckdb"
    result = cli("run", "--domain", "calendar", "--model", "sim:faulty", "--seed", str(seed), "--case", "cal-d2-001",
                 "--db", str(db), env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = sql_json(db, "SELECT code, param, expected, actual FROM failures", env)
    assert {
        "code": "CHAIN_BROKEN",
        "param": "booking_id",
        "expected": '"BK-1"',
        "actual": '"ACT-002"',
    } in rows


def test_a_plugin_rung_reaches_sql_without_a_migration(tmp_path):
    env = with_plugin(TOY_RUNG)
    db = tmp_path / "toy.duckdb"
    run = cli(
        "run", "--model", "sim:oracle", "--case", "fc-d1-001", "--case", "fc-d4-001", "--db", str(db),
        "--rungs", "step_budget", env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    rows = sql_json(
        db,
        "SELECT c.case_id, g.rung, g.status, g.scores['calls'] AS calls, t.verdict, t.settled_by, t.evaluator_version "
        "FROM rung_results g JOIN trace_results t USING (trace_id) JOIN case_runs c USING (trace_id) "
        "WHERE g.rung_name = 'step_budget' ORDER BY 1",
        env,
    )
    assert [(r["case_id"], r["rung"], r["status"], r["calls"]) for r in rows] == [
        ("fc-d1-001", 3, "pass", 1.0),
        ("fc-d4-001", 3, "fail", 2.0),
    ]
    assert rows[1]["verdict"] == "FAIL" and rows[1]["settled_by"] == "step_budget"
    assert all("+step_budget" in r["evaluator_version"] for r in rows)
    failures = sql_json(db, "SELECT case_id, rung_name, code, message FROM failures", env)
    assert failures == [
        {"case_id": "fc-d4-001", "rung_name": "step_budget", "code": "STEP_BUDGET",
         "message": "2 tool calls exceed the budget of 1"}
    ]  # fmt: skip
    # Without the plug-in (installed but not named), re-evaluating replaces its rows: nothing of it
    # is left behind.
    assert cli("evaluate", "--db", str(db), env=env).returncode == 0
    assert sql_json(db, "SELECT count(*) AS n FROM rung_results WHERE rung_name = 'step_budget'", {}) == [
        {"n": 0}
    ]


@pytest.mark.parametrize("name", ["nope", "retail2"])
def test_an_unknown_domain_is_one_line(name, tmp_path):
    result = cli("run", "--domain", name, "--db", str(tmp_path / "x.duckdb"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert f"unknown domain {name!r}; installed: retail" in result.stderr


def extending_commands() -> list[str]:
    doc = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", doc, re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_docs_extending_commands_run_as_written(tmp_path):
    """Every command of docs/extending.md, in order, from a checkout's root (tests/ is there)."""
    commands = extending_commands()
    assert len(commands) >= 9
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    env.pop("OPENAI_API_KEY", None)
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)
        if command.startswith("traceladder sql"):
            assert "0 row(s)" not in done.stdout, command


def plugin_rows(db, env):
    return sql_json(
        db,
        "SELECT t.evaluator_version AS version, count(g.trace_id) AS step_budget_rows FROM trace_results t "
        "LEFT JOIN rung_results g ON g.trace_id = t.trace_id AND g.rung_name = 'step_budget' GROUP BY 1 ORDER BY 1",
        env,
    )


def test_an_installed_plugin_rung_joins_only_when_named(tmp_path):
    """Installing a rung changes nothing; `--rungs` or the project's traceladder.toml opts in, the
    flag beats the file, and every result records which rungs judged it."""
    env = with_plugin(TOY_RUNG)
    db = tmp_path / "opt.duckdb"
    run = cli("run", "--model", "sim:oracle", "--case", "fc-d1-001", "--case", "fc-d4-001", "--db", str(db),
              "--no-judge", env=env)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert plugin_rows(db, env) == [{"version": "3.0.0", "step_budget_rows": 0}]
    assert cli("evaluate", "--db", str(db), "--rungs", "step_budget", "--no-judge", env=env).returncode == 0
    assert plugin_rows(db, env) == [{"version": "3.0.0+step_budget", "step_budget_rows": 2}]
    project = tmp_path / "project"
    project.mkdir()
    (project / "traceladder.toml").write_text('[evaluation]\nrungs = ["step_budget"]\n')
    assert cli("evaluate", "--db", str(db), "--no-judge", env=env).returncode == 0  # not in the project
    assert plugin_rows(db, env) == [{"version": "3.0.0", "step_budget_rows": 0}]
    assert cli("evaluate", "--db", str(db), "--no-judge", env=env, cwd=project).returncode == 0
    assert plugin_rows(db, env) == [{"version": "3.0.0+step_budget", "step_budget_rows": 2}]
    assert cli("evaluate", "--db", str(db), "--no-judge", "--rungs", "", env=env, cwd=project).returncode == 0
    assert plugin_rows(db, env) == [{"version": "3.0.0", "step_budget_rows": 0}]
    # the ladder reaches the shards of a sharded evaluation too
    sharded = cli("evaluate", "--db", str(db), "--shards", "2", "--no-judge", env=env, cwd=project)
    assert sharded.returncode == 0, sharded.stderr
    assert plugin_rows(db, env) == [{"version": "3.0.0+step_budget", "step_budget_rows": 2}]


@pytest.mark.parametrize(
    ("argv", "config", "message"),
    [
        (
            ["evaluate", "--rungs", "nope"],
            None,
            "unknown rung 'nope'; installed: call_match, invariants, judge",
        ),
        (["evaluate", "--rungs", "schema"], None, "rung 'schema' is built in and always runs"),
        (["evaluate", "--rungs", "step_budget,step_budget"], None, "rung 'step_budget' is named twice"),
        (["evaluate", "--rungs", "a,,b"], None, "give rung names separated by commas"),
        (["watch", "--once", "--rungs", "nope"], None, "unknown rung 'nope'"),
        (["run", "--model", "sim:oracle", "--rungs", "nope"], None, "unknown rung 'nope'"),
        (["evaluate"], '[evaluation]\nrungs = ["nope"]\n', "unknown rung 'nope'"),
        (
            ["evaluate"],
            '[evaluation]\nrung = ["step_budget"]\n',
            "unknown key 'rung' in [evaluation]; known: rungs",
        ),
        (
            ["evaluate"],
            "[evalution]\nrungs = []\n",
            "unknown table [evalution]; known: [plugins], [evaluation]",
        ),
        (["evaluate"], '[evaluation]\nrungs = "step_budget"\n', "rungs must be a list of rung names"),
        (["evaluate"], "[evaluation\n", "traceladder.toml: cannot be read"),
        (["evaluate"], '[plugins]\nrungs = ["nope"]\n', "unknown rung 'nope'"),
        (
            ["evaluate"],
            '[plugins]\nrungs = ["step_budget"]\n[evaluation]\nrungs = []\n',
            "rungs are named twice; keep [plugins] rungs",
        ),
        (
            ["evaluate"],
            '[plugins]\nconventions = "x"\n',
            "[plugins] conventions must be a list of convention names",
        ),
    ],
)
def test_a_wrong_rung_name_or_project_file_is_one_line(tmp_path, argv, config, message):
    db = tmp_path / "x.duckdb"
    if config is not None:
        (tmp_path / "traceladder.toml").write_text(config)
    done = cli(*argv, "--db", str(db), env=with_plugin(TOY_RUNG), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr
    assert not db.exists() or not sql_json(db, "SELECT run_id FROM runs", {})  # nothing ran
