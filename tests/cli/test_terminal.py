"""What the terminal shows, through the real CLI: each case's progress line carries its verdict by
the code rungs — the one the evaluation after the run records, rung 5 aside — and an estimate of
the time left; piped tables are as wide as `COLUMNS` and wrap, never cut; the glossary the README
links where each term first appears."""

from __future__ import annotations

import re
import unicodedata

import pytest

from tests.conftest import ROOT, cli, rows

LINE = re.compile(r"^\[(\d+)/(\d+)\] (\S+) (.+) · eta (\S+)$")
ETA = re.compile(r"^(\d+s|\d+m\d\ds|\d+h\d\dm)$")


def progress_lines(stderr: str) -> list[re.Match]:
    found = [LINE.match(line) for line in stderr.splitlines() if line.startswith("[")]
    assert all(found), stderr
    return [m for m in found if m]


def test_each_progress_line_shows_the_verdict_the_evaluation_records(faulty_suite):
    """The progress lines of the session's shared default run (`faulty_suite`: a real `run`
    process, sim:faulty seed 0, its stderr kept), against what its store records."""
    db, result = faulty_suite
    assert result.returncode == 0, result.stderr
    lines = progress_lines(result.stderr)
    assert sorted(int(m[1]) for m in lines) == list(range(1, 73)) and {m[2] for m in lines} == {"72"}
    shown = {m[3]: m[4] for m in lines}
    stored = rows(db, "SELECT r.case_id, r.verdict, r.failure_class, r.settled_at, r.settled_by, c.error_type "
                      "FROM trace_results r JOIN case_runs c USING (trace_id)")  # fmt: skip
    assert len(stored) == 72
    kinds = set()
    for case_id, verdict, failure_class, settled_at, settled_by, error_type in stored:
        line = shown[case_id]
        if verdict == "AGENT_ERROR":
            assert line.startswith(f"AGENT_ERROR {error_type}"), (case_id, line)
        elif verdict == "FAIL" and settled_at < 5:  # a code rung's FAIL is final
            assert line == f"FAIL {failure_class} at rung {settled_at} ({settled_by})", (case_id, line)
        else:  # passed every code rung: rung 5 decided after the run, PASS or FAIL
            assert line == "PASS by the code rungs; rung 5 after the run", (case_id, line, verdict)
        kinds.add((verdict, settled_at == 5))
    # every kind of line occurred: a code-rung FAIL, a rung-5 FAIL, a PASS, an agent error
    assert {("FAIL", False), ("FAIL", True), ("PASS", True), ("AGENT_ERROR", False)} <= kinds
    assert not any(line.endswith(" ok") or "answered" in line for line in shown.values())
    etas = {int(m[1]): m[5] for m in lines}
    assert all(ETA.match(eta) for eta in etas.values()), etas
    assert etas[72] == "0s"  # nothing left


def test_without_a_judge_a_pass_is_final_and_without_an_evaluation_the_line_says_so(tmp_path):
    db = tmp_path / "n.duckdb"
    judged = cli("run", "--model", "sim:faulty", "--case", "fc-d1-005", "--case", "fc-d1-002", "--no-judge",
                 "--db", str(db))  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    assert {m[3]: m[4] for m in progress_lines(judged.stderr)} == {
        "fc-d1-005": "PASS",
        "fc-d1-002": "FAIL PARAM_HALLUCINATED_ID at rung 2 (call_match)",
    }
    unjudged = cli("run", "--model", "sim:faulty", "--case", "fc-d1-002", "--no-report", "--db", str(db))
    assert unjudged.returncode == 0, unjudged.stderr
    (line,) = progress_lines(unjudged.stderr)
    assert line[4] == "answered in 2 step(s); verdict after evaluation" and line[5] == "0s"


def test_the_estimate_reads_at_a_glance():
    from traceladder.cli.progress import duration

    assert [duration(s) for s in (0, 0.4, 41, 59.6, 125, 3599, 3720)] == [
        "0s", "0s", "41s", "1m00s", "2m05s", "59m59s", "1h02m",
    ]  # fmt: skip


def width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


@pytest.fixture(scope="module")
def failing_store(tmp_path_factory):
    """A run with long failure classes, tool names and explanations in its tables."""
    db = tmp_path_factory.mktemp("cols") / "c.duckdb"
    cases = ("fc-d1-002", "fc-d1-014", "fc-d1-015", "fc-d2-001", "fc-d2-002", "fc-d3-004", "fc-d1-005")
    result = cli("run", "--model", "sim:faulty", "--no-judge", "--db", str(db),
                 *(arg for case in cases for arg in ("--case", case)))  # fmt: skip
    assert result.returncode == 0, result.stderr
    return db


@pytest.mark.parametrize("columns", ["60", "80"])
def test_piped_tables_are_as_wide_as_columns_and_wrap_instead_of_cutting(failing_store, columns):
    result = cli("report", "--db", str(failing_store), env={"COLUMNS": columns})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(width(line) for line in lines) <= int(columns), result.stdout
    cut = [line for line in lines if "…" in line and line[:1] in "┃│┏┡└"]
    assert cut == [], "\n".join(cut)


def test_piped_tables_without_columns_keep_120(failing_store):
    env = {"COLUMNS": ""}
    result = cli("report", "--db", str(failing_store), env=env)
    assert result.returncode == 0, result.stderr
    assert max(width(line) for line in result.stdout.splitlines()) == 120


def test_sql_tables_respect_columns_too(failing_store):
    result = cli("sql", "SELECT case_id, explanation FROM trace_results", "--db", str(failing_store),
                 env={"COLUMNS": "70"})  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert max(width(line) for line in result.stdout.splitlines()) <= 70


# -- the glossary ----------------------------------------------------------------------------------

GLOSSARY = ROOT / "docs" / "glossary.md"
TERMS = {"golden": "golden", "rung": "rung", "settle": "settled", "pass^k": "passk", "kappa": "kappa",
         "D1–D4": "d1d4-the-dimensions"}  # fmt: skip


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def prose(markdown: str) -> str:
    """The text outside fenced code blocks (a link cannot live inside one)."""
    return re.sub(r"```.*?```", "", markdown, flags=re.S)


def test_the_glossary_explains_each_term_and_the_readme_links_it_where_it_first_appears():
    anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", GLOSSARY.read_text(encoding="utf-8"), re.M)}
    assert set(TERMS.values()) <= anchors, anchors
    text = prose((ROOT / "README.md").read_text(encoding="utf-8"))
    for term, anchor in TERMS.items():
        first = re.search(rf"(?<![\w-]){re.escape(term)}", text, re.I)
        assert first, term
        # the first mention sits inside a link to its entry: [...term...](docs/glossary.md#anchor)
        link = re.compile(r"\[([^\]]*)\]\(docs/glossary\.md#([\w-]+)\)")
        around = [m for m in link.finditer(text) if m.start() <= first.start() < m.end()]
        assert around and around[0][2] == anchor, (term, text[first.start() - 80 : first.start() + 80])
