"""`report` printing text to a terminal checks the summary it shows against ReportV1, as every
written report does (`--output`, JSON, JUnit): a summary whose arithmetic is wrong is refused as
an internal error (exit 3) before a line of it is shown, never printed as if it were right.

The summary is computed in SQL and no store we could damage made it inconsistent, so the fault
is injected where the report is opened (as `test_report_contract.py` injects a broken result)."""

from __future__ import annotations

from tests.conftest import out_value
from traceladder.cli.main import main
from traceladder.workflows import report_formats


def test_a_broken_summary_is_refused_on_the_terminal_too(faulty_suite, tmp_path, monkeypatch, capsys):
    db, result = faulty_suite
    run_id = out_value(result, "run_id")
    assert main(["report", run_id, "--db", str(db)]) == 0  # the real summary is shown
    assert run_id in capsys.readouterr().out
    real = report_formats.open_report

    def broken(*args, **kwargs):  # one more scored trace than PASS + FAIL: what a schema can't state
        opened = real(*args, **kwargs)
        opened.head["summary"]["scored_count"] += 1
        return opened

    monkeypatch.setattr(report_formats, "open_report", broken)
    written = main(["report", run_id, "--db", str(db), "--output", str(tmp_path / "r.txt")])
    refused = capsys.readouterr()
    shown = main(["report", run_id, "--db", str(db)])
    printed = capsys.readouterr()
    assert written == shown == 3
    assert "refusing to write an invalid ReportV1: summary: scored_count" in refused.err
    assert printed.err == refused.err and printed.out == ""
