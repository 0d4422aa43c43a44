"""An agent run's control as the built-in loop's: Ctrl-C keeps every finished case and exits 130,
`--resume` runs only what is missing with the recorded agent (a changed agent is refused),
`--repeat` runs each case K times."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import as_foreground, cli, out_value, rows

AGENTS = Path(__file__).parent / "agents"


def test_ctrl_c_keeps_finished_cases_and_resume_finishes_with_the_recorded_agent(tmp_path: Path) -> None:
    db = tmp_path / "c.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "traceladder", "run", "--agent", "misbehaving:slow", "--agent-version", "v1",
         "--model", "sim:oracle", "--dimension", "D1", "--concurrency", "2", "--no-report", "--db", str(db)],
        cwd=AGENTS, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=as_foreground,
    )  # fmt: skip
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    for line in proc.stderr:
        if line.startswith("[4/18]") or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "resume with `traceladder run --resume" in err and "Traceback" not in err
    ((run_id, status),) = rows(db, "SELECT run_id, status FROM runs")
    finished = rows(db, "SELECT count(*) FROM case_runs")[0][0]
    assert status == "interrupted" and 4 <= finished < 18

    changed = cli("run", "--resume", run_id, "--agent-version", "v2", "--db", str(db), cwd=AGENTS)
    assert changed.returncode == 2 and "inputs changed since it started (agent_version)" in changed.stderr
    flag = cli("run", "--resume", run_id, "--agent", "misbehaving:raises", "--db", str(db), cwd=AGENTS)
    assert flag.returncode == 2 and "drop --agent" in flag.stderr

    resumed = cli("run", "--resume", run_id, "--agent-version", "v1", "--db", str(db), cwd=AGENTS)
    assert resumed.returncode == 0, resumed.stderr
    assert out_value(resumed, "run_id") == run_id
    assert f"[{finished + 1}/18]" in resumed.stderr
    assert rows(db, "SELECT status FROM runs") == [("complete",)]
    assert rows(db, "SELECT count(*), count(DISTINCT case_id) FROM case_runs") == [(18, 18)]
    assert rows(db, "SELECT DISTINCT verdict FROM case_results") == [("PASS",)]


def test_repeat_runs_each_case_k_times_in_traces_of_their_own(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    done = cli("run", "--agent", "misbehaving:raises", "--model", "sim:oracle", "--case", "fc-d1-001",
               "--repeat", "3", "--db", str(db), cwd=AGENTS)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert rows(db, "SELECT repeat_index, verdict FROM case_results ORDER BY 1") == [
        (0, "PASS"),
        (1, "PASS"),
        (2, "PASS"),
    ]
    assert rows(db, "SELECT count(DISTINCT trace_id) FROM case_runs") == [(3,)]
    selection = json.loads(rows(db, "SELECT selection FROM runs")[0][0])
    assert selection == {"case_ids": ["fc-d1-001"], "repeat": 3, "dimension_names": {
        "D1": "tool selection", "D2": "parameter fill", "D3": "when to call", "D4": "request/confirm chains"}}  # fmt: skip
    assert os.path.exists(out_value(done, "report_path"))
