"""One loader for every plug-in kind (rungs, conventions, domains, report formats), one opt-in rule
(a plug-in is used where it is named: its flag or traceladder.toml's [plugins]), a public API a
plug-in imports instead of internals, and `traceladder plugins` saying what is installed and in
force. Everything through the real CLI, with plug-ins registered by entry points the way an
installed package registers them."""

from __future__ import annotations

import ast
import csv
import io
import json
import os

import pytest

from tests.conftest import ROOT, cli, out_value

PLUGINS = ROOT / "tests" / "plugins"
ALL = [PLUGINS / name for name in ("toy_format", "toy_rung", "toy_convention", "calendar")]


def with_plugins(*paths) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([*map(str, paths), os.environ.get("PYTHONPATH", "")])}


def rows_of(result) -> list[dict[str, str]]:
    assert result.stderr == "", result.stderr
    return json.loads(result.stdout)


def test_plugins_lists_every_kind_says_what_is_in_force_and_what_fails_to_load(tmp_path):
    listed = cli("plugins", "--json", env=with_plugins(*ALL), cwd=tmp_path)
    assert listed.returncode == 1  # the toy format package registers one broken entry
    rows = {(r["kind"], r["name"], r["source"]): r for r in rows_of(listed)}
    assert {k for k, _, _ in rows} == {"rung", "convention", "domain", "format"}
    assert rows["rung", "schema", "built-in"]["active"] == "always"
    assert rows["convention", "otel_genai", "built-in"]["status"] == "ok"
    assert rows["domain", "retail", "built-in"]["status"] == "ok"
    toy_rung = rows["rung", "step_budget", "traceladder-toy-rung"]
    assert toy_rung["active"].startswith("not named") and toy_rung["status"] == "ok"
    assert rows["convention", "toyframework", "traceladder-toy-convention"]["active"].startswith("not named")
    assert rows["domain", "calendar", "traceladder-calendar"]["active"] == "where --domain names it"
    assert rows["format", "csv", "traceladder-toy-format"]["status"] == "ok"
    broken = rows["format", "broken", "traceladder-toy-format"]["status"]
    assert broken == "format 'broken' (traceladder_toy_format:NOT_A_FORMAT) is not a traceladder ReportFormat"
    # an installed plug-in cannot replace a built-in: it is listed as ignored, never loaded
    shadow = rows["format", "text", "traceladder-toy-format"]
    assert shadow["active"].startswith("ignored") and shadow["status"] == "not loaded"

    # named in the project's file, a rung and a convention are in force
    (tmp_path / "traceladder.toml").write_text(
        '[plugins]\nrungs = ["step_budget"]\nconventions = ["toyframework"]\n'
    )
    named = {
        (r["kind"], r["name"]): r
        for r in rows_of(cli("plugins", "--json", env=with_plugins(*ALL), cwd=tmp_path))
    }
    assert named["rung", "step_budget"]["active"].startswith("named in")
    assert named["convention", "toyframework"]["active"].startswith("named by")

    # without plug-ins installed the table has only built-ins, and exit 0
    plain = cli("plugins", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines()[0] == "kind\tname\tsource\tactive\tstatus"
    assert all("\tbuilt-in\t" in line for line in plain.stdout.splitlines()[1:])


def test_a_report_format_plugin_renders_a_run_only_when_named(tmp_path):
    db = tmp_path / "s.duckdb"
    run = cli("run", "--model", "sim:faulty", "--seed", "3", "--case", "fc-d1-001", "--case", "fc-d2-001",
              "--case", "fc-d4-001", "--db", str(db), "--no-judge")  # fmt: skip
    assert run.returncode == 0, run.stderr
    run_id = out_value(run, "run_id")
    env = with_plugins(PLUGINS / "toy_format")
    done = cli("report", run_id, "--db", str(db), "--format", "csv", env=env)
    assert done.returncode == 0, done.stderr
    lines = list(csv.DictReader(io.StringIO(done.stdout)))
    report = json.loads(cli("report", run_id, "--db", str(db), "--format", "json").stdout)
    assert [(r["trace_id"], r["case_id"], r["verdict"]) for r in lines] == [
        (r["trace_id"], r["case_id"], r["verdict"]) for r in report["results"]
    ]
    out = tmp_path / "r.csv"
    to_file = cli("report", run_id, "--db", str(db), "--format", "csv", "--output", str(out), env=env)
    assert to_file.returncode == 0 and out.read_text() == done.stdout
    # the built-in text format is the built-in one, whatever an installed package registers
    assert (
        cli("report", run_id, "--db", str(db), "--format", "text", env=env).stdout
        == cli("report", run_id, "--db", str(db), "--format", "text").stdout
    )
    # without the package, or naming what is not a format: one line, exit 2
    for argv, message in (
        (["--format", "csv"], "unknown format 'csv'; installed: html, json, junit, text"),
        (["--format", "broken"], "is not a traceladder ReportFormat"),
    ):
        failed = cli("report", run_id, "--db", str(db), *argv, env=env if "broken" in argv else {})
        assert failed.returncode == 2 and failed.stderr.count("\n") == 1 and message in failed.stderr, (
            failed.stderr
        )


def test_a_convention_named_in_the_project_file_is_recorded_by_the_first_write(tmp_path):
    from tests.conventions.test_convention_registry import _toy_trace

    trace = _toy_trace(tmp_path / "toy.json")
    env = with_plugins(PLUGINS / "toy_convention")
    env["TRACELADDER_CONVENTIONS"] = ""  # the file wins over the former variable
    (tmp_path / "traceladder.toml").write_text('[plugins]\nconventions = ["toyframework"]\n')
    db = tmp_path / "s.duckdb"
    assert cli("ingest", "--db", str(db), str(trace), env=env, cwd=tmp_path).returncode == 0
    calls = cli("sql", "SELECT tool_name, convention FROM tool_calls", "--db", str(db), "--json", env=env)
    assert json.loads(calls.stdout) == [{"tool_name": "get_weather", "convention": "toyframework"}]
    listed = {r["name"]: r for r in rows_of(cli("plugins", "--json", "--db", str(db), env=env, cwd=tmp_path))}
    assert listed["toyframework"]["active"] == "recorded in the store"


@pytest.mark.parametrize("package", ["toy_format", "toy_rung", "toy_convention", "calendar"])
def test_a_plugin_imports_only_the_public_plugin_api(package):
    """The test plug-ins are written as a third party would: every traceladder name they use comes
    from `traceladder.plugin_api.*`, so an internal move cannot break them."""
    imported = set()
    for path in (PLUGINS / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("traceladder"):
                imported.add(node.module)
            if isinstance(node, ast.Import):
                imported.update(a.name for a in node.names if a.name.startswith("traceladder"))
    assert imported and all(m.startswith("traceladder.plugin_api.") for m in imported), imported
