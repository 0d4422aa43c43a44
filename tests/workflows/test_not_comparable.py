"""A refusal as "not comparable" names every field of the run configuration that differs, with both values —
for the gate, `baseline check`, `consistency` and `baseline lock` — not only "run configuration"."""

from __future__ import annotations

import json

from conftest import ROOT, cli, out_values

BASELINE = ROOT / "baselines" / "sim-faulty.json"


def _run(db, *args: str) -> str:
    done = cli("run", "--model", "sim:faulty", "--db", str(db), "--case", "fc-d1-001", *args)
    assert done.returncode == 0, done.stderr
    return out_values(done)["run_id"]


def test_gate_and_baseline_check_name_each_differing_configuration_field(tmp_path):
    db = tmp_path / "s.duckdb"
    recorded = json.loads(BASELINE.read_text())["config"]
    run = _run(db, "--max-steps", "5", "--max-tokens", "999")
    gate = cli("gate", "--db", str(db), "--run", run, "--baseline", str(BASELINE), "--allow-partial")
    assert gate.returncode == 2, gate.stderr
    expected = (
        f"different run configuration (max_steps: 5 vs baseline {recorded['max_steps']}; "
        f"max_tokens: 999 vs baseline {recorded['max_tokens']})"
    )
    assert expected in gate.stderr, gate.stderr
    check = cli("baseline", "check", str(BASELINE), "--db", str(db), "--run", run)
    assert check.returncode == 2 and expected in check.stderr, check.stderr


def test_consistency_names_the_differing_fields_of_two_runs(tmp_path):
    db = tmp_path / "s.duckdb"
    first = _run(db)
    other = _run(db, "--timeout", "60")
    done = cli("consistency", first, other, "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert f"runs {first} and {other} are not comparable: different run_config " in done.stderr
    assert f"(case_timeout_s: 60.0 vs {first} 120.0)" in done.stderr, done.stderr
