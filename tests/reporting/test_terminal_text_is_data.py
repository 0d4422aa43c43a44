"""A model's name is data in the text report: emoji codes and rich markup in it print as written,
on the terminal's console and in `--output` text alike (`cli/console.py`, `report_files.text_of`).

The run is real: the `openai` client against the scripted sim:oracle server, under a model name a
user chose."""

from __future__ import annotations

from tests.conftest import cli_in_process, out_value
from tests.scripted_server import ModelServer

NAME = "team:thumbs_up:[bold]v2[/bold]"


def test_a_model_named_with_emoji_codes_and_markup_prints_as_written(tmp_path):
    db = tmp_path / "m.duckdb"
    with ModelServer() as server:
        ran = cli_in_process("run", "--db", str(db), "--model", NAME, "--base-url", server.url, "--case",
                             "fc-d1-001", env={"OPENAI_API_KEY": "k-test"})  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    run_id = out_value(ran, "run_id")
    shown = cli_in_process("report", run_id, "--db", str(db), env={"COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    written = tmp_path / "r.txt"
    assert cli_in_process("report", run_id, "--db", str(db), "--output", str(written)).returncode == 0
    for text in (shown.stdout, written.read_text(encoding="utf-8")):
        header = text.splitlines()[0]
        assert f"model {NAME} ·" in header, header
        assert "👍" not in text
