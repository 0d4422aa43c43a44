"""An agent under test that executes its calls without the model's call id is judged on each call
once. The model's call is seen twice — on the instrumented LLM span, with the id the model gave,
and as the `call_tool` execution — and the two must be read as one call: the execution carries no
id of ours (an invented `call_1` made them two calls, every case FAIL with CALL_EXTRA), so the
extraction pairs it with the model's call by tool and arguments.

The real CLI, a real OpenInference instrumentation of the real `openai` client, the simulated
model; what is extracted is compared with what the model sent (the cases' golden calls, which
`sim:oracle` plays)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from conftest import cli, rows

from traceladder.suite.cases import load_cases

AGENTS = Path(__file__).parent / "agents"
CASES = ("fc-d1-001", "fc-d4-001")


def _sent() -> dict[str, list[tuple[str, dict]]]:
    """The calls `sim:oracle` sends for each case: its golden calls."""
    cases = {c.id: c for c in load_cases()}
    return {cid: [(g.tool, dict(g.params)) for g in cases[cid].calls] for cid in CASES}


def test_an_instrumented_agent_calling_tools_without_ids_is_judged_on_each_call_once(tmp_path: Path) -> None:
    db = tmp_path / "a.duckdb"
    selection = [a for c in CASES for a in ("--case", c)]
    done = cli("run", "--agent", "openinference_no_ids:run", "--model", "sim:oracle", *selection,
               "--db", str(db), cwd=AGENTS)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert rows(db, "SELECT case_id, verdict FROM case_results ORDER BY 1") == [(c, "PASS") for c in CASES]
    # the judge's calls after the run are instrumented too (the agent patched `openai` in this
    # process): their spans name no case and are left out, but they are not the agent's spans
    assert "named no case" not in done.stderr, done.stderr
    assert rows(db, "SELECT count(*) FROM findings") == [(0,)]
    # both sightings are in the store: the LLM span's (OpenInference) and the execution's
    spans = "SELECT count(*) FROM spans WHERE name LIKE 'execute_tool %' AND attributes->>'$.\"gen_ai.tool.call.id\"' IS NULL"
    assert rows(db, spans)[0][0] == sum(len(v) for v in _sent().values())  # no id invented
    got: dict[str, list[tuple[str, dict]]] = {}
    found = rows(
        db,
        "SELECT r.case_id, c.tool_name, c.arguments_raw, c.call_id, c.result FROM tool_calls c "
        "JOIN case_runs r USING (trace_id) ORDER BY r.case_id, c.ordinal",
    )
    for case_id, tool, arguments, call_id, result in found:
        got.setdefault(case_id, []).append((tool, json.loads(arguments)))
        assert call_id is not None and re.fullmatch(r"call_\d+_\d+", call_id)  # the model's id
        assert result is not None  # the execution's result joined the model's call
    assert got == _sent()


def test_the_tools_url_takes_the_models_call_id_and_refuses_one_that_is_not_a_string(tmp_path: Path) -> None:
    db = tmp_path / "c.duckdb"
    command = f"{sys.executable} {AGENTS / 'call_ids_cmd.py'}"
    done = cli("run", "--agent-cmd", command, "--model", "sim:oracle", "--case", "fc-d1-001", "--db", str(db))
    assert done.returncode == 0, done.stderr[-2000:]
    ((said,),) = rows(db, "SELECT final_text FROM case_runs")
    refused, with_id, without = said.splitlines()
    assert refused.startswith("400 ") and "TypeError: call_id is not a string" in refused
    assert (with_id, without) == ("200", "200")
    ids = "SELECT attributes->>'$.\"gen_ai.tool.call.id\"' FROM spans WHERE name LIKE 'execute_tool %' ORDER BY start_ns"
    assert rows(db, ids) == [("call_model_1",), (None,)]  # the refused call executed nothing
