"""Seed 1's report contract, exactly (issue 14, point 6): ReportV1 and BaselineV1 are published
JSON Schemas that every report and baseline is validated against before it is written; each result
keeps its warnings next to its diff; `make eval-fc [CASE=<id>]` ends as the seed documents.

Reports come from real runs through the real CLI (the simulated model, its server quirks, and a
real HTTP model server that fails or refuses); corruption is injected into a real report object.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import ROOT, cli, out_values, rows
from tests.scripted_server import ModelServer, Reply
from traceladder.cli.main import main
from traceladder.instrumentation import semconv as sc
from traceladder.schemas import SchemaViolation
from traceladder.store.db import open_store
from traceladder.workflows import baseline_files, report_files

SCHEMAS = ROOT / "traceladder" / "schemas"
NO_KEY = {"OPENAI_API_KEY": "k-test"}


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def validate(name: str, document: dict) -> list[str]:
    """Independent of traceladder's own helper: the published file, the reference validator."""
    validator = Draft202012Validator(schema(name), format_checker=Draft202012Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def run(db: Path, *args: str, env: dict[str, str] | None = None) -> tuple[dict[str, str], dict]:
    """A real `traceladder run`; its output lines and the JSON report file it wrote."""
    result = cli("run", "--db", str(db), *args, env=env)
    assert result.returncode == 0, result.stderr
    out = out_values(result)
    return out, json.loads(Path(out["report_path"]).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def faulty(faulty_suite):
    """The default full run: sim:faulty, seed 0 — FAILs, AGENT_ERRORs (retried 500s), ignored reads."""
    db, result = faulty_suite
    out = out_values(result)
    return db, out, json.loads(Path(out["report_path"]).read_text(encoding="utf-8"))


# -- the published schemas ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["report-v1.schema.json", "baseline-v1.schema.json"])
def test_the_schemas_are_draft_2020_12_and_closed(name):
    document = schema(name)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(document)
    assert document["additionalProperties"] is False


def test_the_quirk_names_are_published_exactly_as_the_agent_records_them():
    published = schema("report-v1.schema.json")["$defs"]["server_quirk"]["properties"]["quirk"]["enum"]
    assert published == list(sc.QUIRKS)


def test_the_run_report_file_and_report_json_are_the_same_valid_report_v1(faulty):
    db, out, written = faulty
    assert validate("report-v1.schema.json", written) == []
    printed = json.loads(cli("report", out["run_id"], "--db", str(db), "--format", "json").stdout)
    assert printed == written
    s = written["summary"]
    counts = s["verdict_counts"]
    assert list(counts) == ["PASS", "FAIL", "SKIP", "AGENT_ERROR"]
    assert s["scored_count"] == counts["PASS"] + counts["FAIL"]
    assert s["accuracy"] == counts["PASS"] / s["scored_count"]  # exact, as the seed defines it
    assert counts["AGENT_ERROR"] > 0 and counts["FAIL"] > 0
    assert list(s["dimensions"]) == ["D1", "D2", "D3", "D4"]
    for block in s["dimensions"].values():
        c = block["verdict_counts"]
        assert block["scored_count"] == c["PASS"] + c["FAIL"] and block["accuracy"] == c["PASS"] / (
            c["PASS"] + c["FAIL"]
        )
    assert sum(s["taxonomy_counts"].values()) == counts["FAIL"]
    assert len(s["top_failures"]) <= 5 and len(s["top_worst_tools"]) <= 5
    for result in written["results"]:
        assert {"verdict", "taxonomy", "golden", "actual", "warnings", "diff"} <= set(result)
        assert (result["taxonomy"] is None) == (result["verdict"] != "FAIL")
    partial = next(r for r in written["results"] if any(d["status"] == "partial" for d in r["diff"]))
    entry = next(d for d in partial["diff"] if d["status"] == "partial")
    assert entry["rung_name"] == "call_match" and entry["diffs"] and entry["code"] == partial["taxonomy"]


def test_a_one_case_run_still_reports_every_dimension(tmp_path):
    _, report = run(tmp_path / "one.duckdb", "--model", "sim:oracle", "--case", "fc-d2-004")
    assert validate("report-v1.schema.json", report) == []
    dims = report["summary"]["dimensions"]
    assert list(dims) == ["D1", "D2", "D3", "D4"]
    assert dims["D2"]["case_count"] == 1 and dims["D1"] == {
        "case_count": 0, "verdict_counts": {"PASS": 0, "FAIL": 0, "SKIP": 0, "AGENT_ERROR": 0},
        "scored_count": 0, "accuracy": None,
    }  # fmt: skip


# -- validated before it is written ---------------------------------------------------------------


def _loaded(db: Path, run_id: str) -> dict:
    with open_store(db, read_only=True) as store:
        return report_files.load_report(store, run_id)


@pytest.mark.parametrize(
    ("corrupt", "named"),
    [
        (lambda r: r["results"][0].update(verdict="MAYBE"), "results/0/verdict"),
        (lambda r: r["results"][0].pop("warnings"), "'warnings' is a required property"),
        (lambda r: r["summary"]["verdict_counts"].pop("SKIP"), "summary/verdict_counts"),
        (lambda r: r["summary"].update(scored_count=r["summary"]["scored_count"] + 1), "not PASS + FAIL"),
        (
            lambda r: r["summary"].update(accuracy=round(r["summary"]["accuracy"], 2)),
            "not PASS / scored_count",
        ),
        (lambda r: r["results"][1].update(taxonomy="PARAM_MISSING", verdict="PASS"), "results/1/taxonomy"),
        (lambda r: r.update(extra=1), "Additional properties are not allowed"),
    ],
)
def test_a_broken_report_is_refused_and_no_file_appears(faulty, tmp_path, corrupt, named):
    db, out, _ = faulty
    report = _loaded(db, out["run_id"])
    corrupt(report)
    copy = tmp_path / "store.duckdb"  # save_json_report writes reports/RUN.json next to the store
    with pytest.raises(SchemaViolation, match=re.escape(named)) as refused:
        report_files.save_json_report(report, copy)
    assert str(refused.value).startswith("refusing to write an invalid ReportV1: ")
    assert not (tmp_path / "reports").exists()
    for fmt in report_files.FORMATS:  # no rendering of a broken report, whatever the format
        with pytest.raises(SchemaViolation):
            report_files.render(report, fmt)


def test_the_cli_refuses_a_broken_report_as_an_internal_error(faulty, tmp_path, monkeypatch, capsys):
    db, out, _ = faulty
    real = report_files.result_entries

    def broken(*args, **kwargs):  # the fourth result of the run (results stream a batch at a time)
        results = real(*args, **kwargs)
        results[3]["warnings"] = ["not an object"]
        return results

    monkeypatch.setattr(report_files, "result_entries", broken)
    target = tmp_path / "r.json"
    code = main(["report", out["run_id"], "--db", str(db), "--format", "json", "--output", str(target)])
    err = capsys.readouterr().err
    assert code == 3 and not target.exists()
    assert "SchemaViolation: refusing to write an invalid ReportV1: results/3/warnings/0" in err


@pytest.fixture(scope="module")
def lockable(tmp_path_factory):
    """Three small runs with identical inputs, their consistency record, a completed review."""
    folder = tmp_path_factory.mktemp("lock")
    db = folder / "store.duckdb"
    selection = ("--case", "fc-d1-002", "--case", "fc-d1-009", "--case", "fc-d3-005")
    runs = [
        out_values(cli("run", "--db", str(db), "--seed", "0", *selection, "--no-report"))["run_id"]
        for _ in range(3)
    ]
    assert cli("evaluate", "--db", str(db)).returncode == 0
    assert cli("consistency", *runs, "--db", str(db), "--output", str(folder / "c.json")).returncode == 0
    assert (
        cli(
            "baseline", "review-template", runs[0], "--db", str(db), "--output", str(folder / "r.json")
        ).returncode
        == 0
    )
    review = json.loads((folder / "r.json").read_text())
    for item in review["reviews"]:
        item["classification"] = "model_error"
    (folder / "r.json").write_text(json.dumps(review))
    return db, runs, folder


def _lock_args(lockable, output: Path) -> list[str]:
    db, runs, folder = lockable
    return ["baseline", "lock", "--db", str(db), "--canonical", runs[0], "--consistency", str(folder / "c.json"),
            "--review", str(folder / "r.json"), "--output", str(output)]  # fmt: skip


def test_a_locked_baseline_is_a_valid_baseline_v1_bound_to_a_valid_report(lockable, tmp_path):
    out = tmp_path / "b.json"
    result = cli(*_lock_args(lockable, out))
    assert result.returncode == 0, result.stderr
    baseline = json.loads(out.read_text())
    assert validate("baseline-v1.schema.json", baseline) == []
    assert set(baseline["input_hashes"]) == {"cases", "tool_schemas", "fixtures", "policy", "system_prompt",
                                             "run_config", "inputs"}  # fmt: skip
    assert {"model", "provider", "config", "locked_at"} <= set(baseline)
    db, runs, _ = lockable
    report = json.loads(cli("report", runs[0], "--db", str(db), "--format", "json").stdout)
    assert validate("report-v1.schema.json", report) == []
    assert baseline["summary"]["accuracy"] == report["summary"]["accuracy"]


def test_a_broken_baseline_is_refused_and_no_file_appears(lockable, tmp_path, monkeypatch, capsys):
    real = baseline_files.build_baseline

    def broken(*args, **kwargs):
        return dict(
            real(*args, **kwargs), review={"fails": 1, "model_error": 0, "judge_error": 1, "golden_error": 0}
        )

    monkeypatch.setattr(baseline_files, "build_baseline", broken)
    out = tmp_path / "b.json"
    code = main(_lock_args(lockable, out))
    err = capsys.readouterr().err
    assert code == 3 and not out.exists()
    assert "refusing to write an invalid BaselineV1: review/judge_error: 0 was expected" in err


def test_the_committed_baseline_matches_the_published_schema():
    baseline = json.loads((ROOT / "baselines" / "sim-faulty.json").read_text())
    assert validate("baseline-v1.schema.json", baseline) == []


# -- warnings next to the diff --------------------------------------------------------------------


def test_ignored_whitelisted_reads_are_warnings_exactly_where_the_judge_ignored_them(faulty):
    db, out, report = faulty
    ignored = {
        case_id: json.loads(ordinals)
        for case_id, ordinals in rows(
            db,
            "SELECT case_id, evidence->'$.ignored_ordinals' FROM trace_results WHERE run_id = ?",
            [out["run_id"]],
        )
    }
    assert any(ignored.values()), "seed 0 of sim:faulty makes harmless whitelisted extra reads"
    for result in report["results"]:
        reads = [w for w in result["warnings"] if w["kind"] == "ignored_read"]
        assert [w["ordinal"] for w in reads] == ignored[result["case_id"]]
        for w in reads:
            call = next(c for c in result["actual"] if c["ordinal"] == w["ordinal"])
            assert w["tool"] == call["tool"] and call["status"] == "ok"
            assert w["message"] == (
                f"{call['tool']} (call {w['ordinal']}): an extra read the case's whitelist allows; ignored by the judge"
            )
            assert result["verdict"] in ("PASS", "FAIL") and not any(
                d["actual_ordinal"] == w["ordinal"] for d in result["diff"]
            )


def test_requests_retried_until_the_policy_gave_up_are_warnings_on_their_agent_errors(faulty):
    _, _, report = faulty
    errors = [r for r in report["results"] if r["verdict"] == "AGENT_ERROR"]
    assert errors
    for result in errors:
        assert result["explanation"] == "agent error: api_error"
        assert result["warnings"] == [{
            "kind": "retried_request", "step": 1, "retries": 3, "errors": ["http_500"] * 3, "succeeded": False,
            "message": "model request 1 was retried 3× (http_500 ×3) and still failed",
        }]  # fmt: skip


def test_a_request_retried_after_429s_is_a_warning_on_a_passing_case(tmp_path):
    server = ModelServer(failures=[429, 429])
    db = tmp_path / "h.duckdb"
    with server:
        _, report = run(db, "--model", "m", "--base-url", server.url, "--case", "fc-d1-001", "--retry-base-delay", "0",
                        env=NO_KEY)  # fmt: skip
    (result,) = report["results"]
    assert result["verdict"] == "PASS"
    assert result["warnings"] == [{
        "kind": "retried_request", "step": 1, "retries": 2, "errors": ["http_429", "http_429"], "succeeded": True,
        "message": "model request 1 was retried 2× (http_429 ×2) and then succeeded",
    }]  # fmt: skip
    chats = rows(db, "SELECT attributes->'$.\"traceladder.request.retries\"' FROM spans WHERE operation = 'chat' "
                      "ORDER BY start_ns")  # fmt: skip
    assert [json.loads(c) if c else None for (c,) in chats] == [["http_429", "http_429"], None]


def test_a_refused_token_field_is_a_tolerated_quirk(tmp_path):
    def newer_api(body):
        if "max_tokens" in body:
            message = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'."
            return Reply(
                status=400,
                body=json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode(),
            )
        return None

    with ModelServer(override=newer_api) as server:
        _, report = run(
            tmp_path / "t.duckdb", "--model", "m", "--base-url", server.url, "--case", "fc-d1-001", env=NO_KEY
        )
    (result,) = report["results"]
    assert result["verdict"] == "PASS"
    assert [(w["kind"], w["quirk"], w["steps"]) for w in result["warnings"]] == [
        ("server_quirk", "token_param_refused", [1])
    ]


QUIRKY = {  # sim:oracle's flags reproducing real servers → the quirks the agent records
    "sim:oracle+args_object+repeated_ids+finish_stop+null_content": {
        "fc-d4-001": [("arguments_object", 2, [1, 2]), ("call_id_repeated", 1, [2]),
                      ("finish_reason_not_tool_calls", 2, [1, 2]), ("content_null", 1, [3])],
        "fc-d3-001": [("content_null", 1, [1])],
    },
    "sim:oracle+missing_ids": {
        "fc-d4-001": [("call_id_missing", 2, [1, 2])],
        "fc-d3-001": [],
    },
}  # fmt: skip


@pytest.mark.parametrize("model", sorted(QUIRKY))
def test_tolerated_server_quirks_are_warnings_and_span_attributes(tmp_path, model):
    db = tmp_path / "q.duckdb"
    _, report = run(db, "--model", model, "--case", "fc-d4-001", "--case", "fc-d3-001")
    assert validate("report-v1.schema.json", report) == []
    for result in report["results"]:
        assert result["verdict"] == "PASS"  # tolerated: the verdict is the oracle's
        quirks = [
            (w["quirk"], w["count"], w["steps"]) for w in result["warnings"] if w["kind"] == "server_quirk"
        ]
        assert quirks == QUIRKY[model][result["case_id"]], result["case_id"]
        for w in result["warnings"]:
            assert sc.QUIRKS[w["quirk"]] in w["message"]
    recorded = rows(
        db,
        "SELECT list(q ORDER BY q) FROM (SELECT unnest(CAST(attributes->'$.\"traceladder.response.quirks\"' AS VARCHAR[])) "
        "AS q FROM spans WHERE operation = 'chat')",
    )[0][0]  # fmt: skip
    expected = sorted(quirk for case in QUIRKY[model].values() for quirk, n, _ in case for _time in range(n))
    assert (recorded or []) == expected
    messages = [w["message"] for r in report["results"] for w in r["warnings"]]
    assert messages and all(m.startswith("server quirk tolerated in model response") for m in messages)


def test_an_ordinary_run_has_no_warnings_and_no_extra_span_attributes(tmp_path):
    db = tmp_path / "o.duckdb"
    _, report = run(db, "--model", "sim:oracle", "--case", "fc-d4-001", "--case", "fc-d2-004")
    assert all(r["warnings"] == [] and r["diff"] == [] for r in report["results"])
    assert rows(db, "SELECT count(*) FROM spans WHERE attributes::VARCHAR LIKE '%traceladder.re%'") == [(0,)]


# -- make eval-fc ---------------------------------------------------------------------------------


def make(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    """The real Makefile. `-o .venv/.installed-core`: the venv the tests run in is the one to use —
    never re-bootstrapped from here, even when pyproject.toml is newer than its stamp."""
    env = {**os.environ, "TRACELADDER_DB": str(db)}
    env.pop("OPENAI_API_KEY", None)
    env.pop("MAKEFLAGS", None)
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "-o", ".venv/.installed-core", *args],
                          capture_output=True, text=True, env=env, timeout=300)  # fmt: skip


def test_make_eval_fc_one_case_ends_as_the_seed_documents(tmp_path):
    db = tmp_path / "fc.duckdb"
    result = make("eval-fc", "CASE=fc-d1-001", db=db)
    assert result.returncode == 0, result.stderr
    tail = result.stdout.splitlines()[-3:]
    assert [line.split("=", 1)[0] for line in tail] == ["raw_run", "report_path", "eval_fc"]
    assert tail[2] == "eval_fc=passed"
    out = out_values(result)
    assert out["raw_run"] == str(db) and out["run_id"] and out["status"].startswith("complete")
    assert out["report_path"] == str(tmp_path / "reports" / f"{out['run_id']}.json")
    assert "domain_validation=passed" in result.stdout and "case_validation=passed" in result.stdout
    report = json.loads(Path(out["report_path"]).read_text(encoding="utf-8"))
    assert validate("report-v1.schema.json", report) == [] and report["summary"]["case_count"] == 1


def test_make_eval_fc_with_a_case_fail_still_passes_orchestration(tmp_path):
    result = make("eval-fc", "CASE=fc-d1-002", f"PYTHON={sys.executable}", db=tmp_path / "f.duckdb")
    assert result.returncode == 0, result.stderr
    report = json.loads(Path(out_values(result)["report_path"]).read_text(encoding="utf-8"))
    assert report["summary"]["verdict_counts"]["FAIL"] == 1  # an outcome, not an orchestration failure
    assert result.stdout.splitlines()[-1] == "eval_fc=passed"


def test_make_eval_fc_with_an_unknown_case_fails_without_passing(tmp_path):
    result = make("eval-fc", "CASE=fc-d9-999", f"PYTHON={sys.executable}", db=tmp_path / "u.duckdb")
    assert result.returncode != 0
    assert "eval_fc=passed" not in result.stdout and "unknown case fc-d9-999" in result.stderr
