"""`traceladder report --format html` (issue 14): one self-contained page per run, per comparison and
per live window, checked as a file: nothing fetched, hostile data escaped, the conversation, the
labels, the size. What a reader sees in a browser is test_html_report_browser.py."""

from __future__ import annotations

import copy
import html as htmllib
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import html_pages
import pytest
from conftest import cli, cli_in_process, out_values, rows
from html_pages import CASES_FILE, HOSTILE_ARG, HOSTILE_TEXT, HOSTILE_TOOL, instruction
from shared_suites import built_once, digest, session_folder

from traceladder.report.html import render_html

MEGABYTE = 1_000_000
NOTE = " (not evaluated: invariants)"  # what the fold appends to a PASS when invariants could not run


@pytest.fixture(scope="session")
def faulty(tmp_path_factory, faulty_suite):
    """A sim:faulty run (seed 0: fc-d1-002 calls get_order with W499 instead of W441), its JSON
    report, its HTML page; and a second run (seed 1) in the same store to compare with. Built once
    per test session (tests/shared_suites.py): the first run is a copy of the session's shared
    `faulty_suite` (the same run, already evaluated), the second run in-process (set-up, not the
    subject); the tests only read the store, and the teardown checks they did not write to it."""
    folder = session_folder(tmp_path_factory) / "html-report"
    db = folder / "store.duckdb"

    def build():
        shared, first = faulty_suite
        shutil.copy(shared, db)
        second = cli_in_process("run", "--model", "sim:faulty", "--seed", "1", "--db", str(db), "--no-report")
        assert second.returncode == 0, second.stderr
        assert cli_in_process("evaluate", "--db", str(db)).returncode == 0
        run_id, other = out_values(first)["run_id"], out_values(second)["run_id"]
        report = json.loads(cli_in_process("report", run_id, "--db", str(db), "--format", "json").stdout)
        done = cli("report", run_id, "--db", str(db), "--format", "html")
        assert done.returncode == 0, done.stderr
        page = Path(out_values(done)["html_path"])
        assert page == folder / "reports" / f"{run_id}.html"  # the default: beside the JSON report
        return {"run_id": run_id, "other": other, "report": report, "page": str(page), "sha256": digest(db)}

    built = built_once(folder, build)
    yield {**built, "db": db, "page": Path(built["page"])}
    assert digest(db) == built["sha256"], f"a test wrote to the shared store {db}"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _embedded(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert found, "no embedded data"
    assert "</" not in found.group(1) and "<!--" not in found.group(1)
    return json.loads(found.group(1))


def test_the_page_is_one_file_that_fetches_nothing(faulty):
    html = faulty["page"].read_text(encoding="utf-8")
    size = faulty["page"].stat().st_size
    print(f"html_bytes={size} for {faulty['report']['summary']['case_count']} cases")
    assert size < MEGABYTE
    tags = _tags(html)
    for tag, attrs in tags:
        assert tag not in ("link", "img", "iframe", "object", "embed", "base", "audio", "video", "source")
        for name in ("src", "href", "action", "srcset", "poster", "data"):
            value = attrs.get(name)
            assert value is None or value.startswith("#"), (tag, name, value)  # in-page anchors only
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "report-data"}, {}]  # data, then the inline script
    assert not re.search(
        r"url\(|@import|https?://",
        re.sub(r'<script type="application/json".*?</script>', "", html, flags=re.S),
    )
    (policy,) = [
        a["content"] for t, a in tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert policy is not None and "default-src 'none'" in policy and "unsafe-inline" not in policy


def test_the_summary_is_in_the_html_without_javascript(faulty):
    html, s = faulty["page"].read_text(encoding="utf-8"), faulty["report"]["summary"]
    counts = s["verdict_counts"]
    rate = counts["PASS"] / (counts["PASS"] + counts["FAIL"])
    assert f'<span id="pass-rate">{rate * 100:.1f}%</span>' in html
    for verdict, n in counts.items():
        assert f'<dd id="count-{verdict}">{n}</dd>' in html
    assert f'<dd id="count-cases">{s["case_count"]}</dd>' in html
    assert "This is the simulator." in html and "sim:faulty" in html
    assert faulty["report"]["run"]["input_hashes"]["inputs"] in html
    judge = s["judge"]  # the simulated run gets the simulated judge: its numbers are on the page
    assert judge["model"] == "sim:judge" and judge["survivors"] == judge["judged_pass"] + judge["judged_fail"]
    assert f"avoided by the ladder: {judge['avoided_by_ladder']}" in html and "not a model" in html
    assert html.count('<tbody class="case"') == s["case_count"]
    assert _embedded(html)["report"]["summary"] == s  # the data inline is the JSON report's


def _doctored(report: dict) -> tuple[dict, dict]:
    """The run's report with a hostile model's names and text in every place data reaches the page."""
    report = copy.deepcopy(report)
    case = next(c for c in report["results"] if c["case_id"] == "fc-d1-002")
    case["actual"][0].update(
        tool=HOSTILE_TOOL, arguments={"order_id": HOSTILE_ARG}, arguments_raw=HOSTILE_ARG
    )
    case["golden"][0]["tool"] = HOSTILE_TOOL
    case["explanation"] = HOSTILE_TEXT
    case["findings"][0].update(tool=HOSTILE_TOOL, message=HOSTILE_TEXT, actual=HOSTILE_ARG)
    case["rungs"][2]["checks"][0]["diffs"][0]["actual"] = HOSTILE_ARG
    case["warnings"] = [HOSTILE_TEXT]
    report["summary"]["taxonomy_counts"][HOSTILE_TOOL] = 1
    report["summary"]["worst_tools"][HOSTILE_TOOL] = 1
    report["run"]["model"] = HOSTILE_TEXT
    span = {
        "span_id": "1",
        "parent_span_id": None,
        "name": HOSTILE_TOOL,
        "operation": "execute_tool",
        "start_ns": 1,
        "end_ns": 5,
        "status_code": "ERROR",
        "error_type": HOSTILE_TEXT,
    }
    conversation = {
        "opening": [{"role": "system", "text": HOSTILE_TEXT}, {"role": HOSTILE_TOOL, "text": HOSTILE_TEXT}],
        "responses": [
            {"step": 1, "text": HOSTILE_TEXT, "calls": [
                {"ordinal": 1, "tool": HOSTILE_TOOL, "arguments_raw": json.dumps({"order_id": HOSTILE_ARG}),
                 "result": HOSTILE_TEXT, "status": HOSTILE_TOOL, "error_type": HOSTILE_ARG},
                {"ordinal": 2, "tool": "get_order", "arguments_raw": HOSTILE_ARG, "result": HOSTILE_TEXT,
                 "status": "ok", "error_type": None},
            ]},
        ],
        "final_answer": HOSTILE_TEXT,
    }  # fmt: skip
    details = {
        case["trace_id"]: {
            "spans": [span],
            "results": {1: HOSTILE_TEXT},
            "final_text": HOSTILE_TEXT,
            "conversation": conversation,
        }
    }
    return report, details


def test_hostile_names_and_text_are_escaped(faulty):
    report, details = _doctored(faulty["report"])
    html = render_html(report, details, generated_at="now")
    assert "alert(" in html  # the data is shown …
    assert html.count("<script") == 2 and "<img" not in html and "<!--" not in html  # … never as markup
    assert "&lt;script&gt;alert(&#x27;tool&#x27;)&lt;/script&gt;" in html
    assert [t for t, _ in _tags(html)].count("script") == 2
    assert not any(
        k.startswith("on") for _, attrs in _tags(html) for k in attrs
    )  # no event handler attributes
    data = _embedded(html)
    assert HOSTILE_TOOL in data["index"][[r["case"] for r in data["index"]].index("fc-d1-002")]["tools"]


def test_a_hostile_conversation_is_shown_as_text(faulty):
    """Tool results, arguments, messages and the answer are a hostile model's and tools' text: each
    is on the page, escaped, and nothing of it is markup."""
    report, details = _doctored(faulty["report"])
    html = render_html(report, details, generated_at="now")
    said = _conversation(_case_html(html, "fc-d1-002"))
    text = htmllib.escape(HOSTILE_TEXT)
    assert f'<pre class="conv-result">{text}</pre>' in said  # a `<script>` in a tool result is text
    assert f'<pre class="conv-args">{htmllib.escape(HOSTILE_ARG)}</pre>' in said  # not JSON: as sent
    assert htmllib.escape(json.dumps(HOSTILE_ARG)) in said  # inside a JSON object's value
    assert f'<blockquote class="answer">{text}</blockquote>' in said
    assert f'<div class="said">{text}</div>' in said and htmllib.escape(HOSTILE_TOOL) in said
    assert f'<pre class="said">{text}</pre>' in html  # the system prompt, printed once
    assert html.count("<script") == 2 and "<img" not in html and "<!--" not in html
    assert not any(k.startswith("on") for _, attrs in _tags(html) for k in attrs)


def test_a_long_table_keeps_what_did_not_pass(faulty):
    report = faulty["report"]
    failing = sum(1 for c in report["results"] if c["verdict"] != "PASS")
    limit = failing + 5
    html = render_html(report, {}, generated_at="now", case_limit=limit)
    assert html.count('<tbody class="case"') == limit and f"The table shows {limit} of 72 traces" in html
    assert f"at most {limit:,} (each with its evidence" in html  # the page states its cap
    assert html.count('data-verdict="PASS"') == limit - failing  # every non-PASS row is kept
    assert f'<dd id="count-cases">{report["summary"]["case_count"]}</dd>' in html  # the summary counts all


def test_flags_that_do_not_fit_are_refused(faulty):
    db = str(faulty["db"])
    for args, says in (
        (("--format", "json", "--compare", faulty["other"]), "--compare needs --format html"),
        (("--format", "html", "--live", faulty["run_id"]), "--live reports the traces that belong to no run"),
        (("--format", "html", "--since", "3"), "--since applies to --live only"),
        (("--format", "html", "--live", "--since", "0"), "must be a number of hours > 0"),
        (
            ("--format", "html", "--compare", faulty["run_id"], faulty["run_id"]),
            "names the run being reported",
        ),
        (("--format", "html", "--live"), "no judged trace without a run was first seen in the last 24 h"),
    ):
        done = cli("report", "--db", db, *args)
        assert done.returncode == 2 and says in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1


def test_compare_lists_the_flipped_verdicts(faulty, tmp_path):
    out = tmp_path / "compare.html"
    done = cli(
        "report",
        faulty["other"],
        "--db",
        str(faulty["db"]),
        "--format",
        "html",
        "--compare",
        faulty["run_id"],
        "--out",
        str(out),
    )
    assert done.returncode == 0 and out_values(done)["html_path"] == str(out)
    flipped = rows(
        faulty["db"],
        "SELECT count(*) FROM (SELECT case_id FROM case_results GROUP BY case_id "
        "HAVING count(DISTINCT verdict) > 1)",
    )[0][0]
    html = out.read_text(encoding="utf-8")
    assert flipped > 0 and f'<span id="flip-count">{flipped}</span>' in html
    assert html.count("→") >= flipped and 'id="delta-dimensions"' in html and "D4" in html


def _case_html(html: str, case_id: str) -> str:
    """The `<tbody>` of one case (its row and its evidence: up to the next case's, since the
    evidence's own tables have bodies too)."""
    for part in html.split('<tbody class="case"')[1:]:
        if f">{case_id}</a></th>" in part.split("</th>", 1)[0] + "</th>":
            return part
    raise AssertionError(f"no row for {case_id}")


def _conversation(case_html: str) -> str:
    found = re.search(r'<ol class="conversation">.*?(?=<h4>Expected and actual calls</h4>)', case_html, re.S)
    assert found, "no conversation in the evidence"
    return found.group(0)


def test_the_evidence_shows_the_whole_conversation(faulty):
    """fc-d1-002: the request, the call with the model's arguments (W499) and the tool's result, the
    final answer — in that order; and for every case, each of its calls, in order."""
    html, db = faulty["page"].read_text(encoding="utf-8"), faulty["db"]
    case = next(c for c in faulty["report"]["results"] if c["case_id"] == "fc-d1-002")
    said = _conversation(_case_html(html, "fc-d1-002"))
    ((result,),) = rows(db, f"SELECT result FROM tool_calls WHERE trace_id = '{case['trace_id']}'")
    ((answer,),) = rows(db, f"SELECT final_text FROM case_runs WHERE trace_id = '{case['trace_id']}'")
    request = said.index(htmllib.escape(instruction("fc-d1-002")))
    call = said.index('<b class="conv-tool">get_order</b>')
    arguments = said.index("&quot;order_id&quot;: &quot;W499&quot;", call)
    returned = said.index(f'<pre class="conv-result">{htmllib.escape(result)}</pre>', arguments)
    final = said.index(f'<blockquote class="answer">{htmllib.escape(answer)}</blockquote>', returned)
    assert request < call < arguments < returned < final
    assert 'href="#prompt-1"' in said and 'id="prompt-1"' in html  # the system prompt, printed once
    assert html.count('<li id="prompt-') == 1
    for c in faulty["report"]["results"]:
        ordinals = [str(a["ordinal"]) for a in c["actual"]]
        assert re.findall(r"→ call #(\d+)", _conversation(_case_html(html, c["case_id"]))) == ordinals


def _labels(html: str) -> list[str]:
    """Every chart label's whole text (its lines joined), in page order."""
    return [
        "".join(re.findall(r"<tspan[^>]*>(.*?)</tspan>", text, re.S))
        for text in re.findall(r'<text class="label"[^>]*>(.*?)</text>', html, re.S)
    ]


def test_chart_labels_are_never_cut(faulty):
    html, report = faulty["page"].read_text(encoding="utf-8"), faulty["report"]
    for svg in re.findall(r"<svg.*?</svg>", html, re.S):
        assert "more characters)" not in svg and "…" not in svg
    labels = {htmllib.unescape(label) for label in _labels(html)}
    spans = {name for (name,) in rows(faulty["db"], "SELECT DISTINCT name FROM spans")}
    assert "execute_tool request_address_update" in labels  # 35 characters: it used to lose 1
    assert "✕ execute_tool request_address_update" in labels
    assert {
        label.removeprefix("✕ ") for label in labels if label.startswith(("✕ ", "chat", "execute", "invoke"))
    } <= spans
    assert {f"{r['rung']} {r['name']}" for r in report["summary"]["ladder"]} <= labels
    assert (
        set(report["summary"]["taxonomy_counts"]) <= labels
        and {f"{d} {report['summary']['dimension_names'][d]}" for d in report["summary"]["dimensions"]}
        <= labels
    )


def test_the_not_evaluated_note_is_said_once(faulty):
    """The JSON keeps each PASS's explanation as the fold wrote it, and beside it the `reason`, the
    explanation without the note (decision 630), which the page shows; the page says which rungs
    could not run once, in the ladder section, with the count and the reason."""
    html, results = faulty["page"].read_text(encoding="utf-8"), faulty["report"]["results"]
    noted = [c for c in results if c["verdict"] == "PASS" and c["explanation"].endswith(NOTE)]
    assert len(noted) == faulty["report"]["summary"]["verdict_counts"]["PASS"] > 0
    assert all(c["reason"] == c["explanation"].removesuffix(NOTE) for c in noted)
    assert all(c["reason"] == c["explanation"] for c in results if c not in noted)
    embedded = {r["trace_id"]: r["reason"] for r in _embedded(html)["report"]["results"]}
    assert embedded and all(
        embedded[c["trace_id"]] == c["reason"] for c in results if c["trace_id"] in embedded
    )
    shown = re.sub(r'<script type="application/json".*?</script>', "", html, flags=re.S)
    assert "(not evaluated:" not in shown
    for c in noted[:5]:
        row = _case_html(html, c["case_id"])
        assert f'<td class="why">{htmllib.escape(c["explanation"].removesuffix(NOTE))}</td>' in row
        assert '<td>invariants</td><td><span class="status s-none">? not evaluated</span>' in row
    missing = [c for c in results if any(r["name"] == "invariants" and r["status"] == "not_evaluated"
                                         for r in c["rungs"])]  # fmt: skip
    (block,) = re.findall(r'<div class="note" id="not-evaluated">.*?</div>', html, re.S)
    assert (
        f'<b>invariants</b> did not run on <b class="not-evaluated-count">{len(missing)}</b> of {len(results)} '
        "traces" in block
    )
    assert "no invariant policy for this trace&#x27;s service" in block
    assert block.count("<li") == 1  # every other rung ran on every trace it could


def _run(db: Path, *args: str) -> str:
    done = cli("run", "--model", "sim:faulty", "--db", str(db), "--no-report", *args)
    assert done.returncode == 0, done.stderr
    return out_values(done)["run_id"]


def test_the_run_page_lists_every_run_of_its_suite(faulty, tmp_path):
    """The faulty store's two full runs, plus a one-case run of the same file (listed: its selection
    differs) and a run of a reformatted copy of the file (not listed: the suite is its file's hash)."""
    db = tmp_path / "store.duckdb"
    shutil.copy(faulty["db"], db)
    subset = _run(db, "--seed", "0", "--case", "fc-d1-002")
    other_file = tmp_path / "edited.jsonl"  # the first case written compactly: another file's SHA-256
    first, *rest = CASES_FILE.read_text(encoding="utf-8").splitlines(True)
    compact = json.dumps(json.loads(first), ensure_ascii=False, separators=(",", ":")) + "\n"
    other_file.write_text(compact + "".join(rest), encoding="utf-8")
    elsewhere = _run(db, "--cases", str(other_file), "--case", "fc-d1-002")
    assert cli("evaluate", "--db", str(db)).returncode == 0
    out = tmp_path / "page.html"
    done = cli("report", faulty["run_id"], "--db", str(db), "--format", "html", "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    (section,) = re.findall(r'<section id="suite-runs">.*?</section>', html, re.S)
    listed = re.findall(r'<tr data-run="([^"]+)"', section)
    assert sorted(listed) == sorted([faulty["run_id"], faulty["other"], subset]) and elsewhere not in section
    assert '<a href="#suite-runs">Runs of this suite</a>' in html
    for run_id in listed:  # each run's own report, read back in process: the page is the subject
        report = json.loads(cli_in_process("report", run_id, "--db", str(db), "--format", "json").stdout)
        (row,) = re.findall(rf'<tr data-run="{run_id}".*?</tr>', section, re.S)
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        s = report["summary"]
        passed, scored = s["verdict_counts"]["PASS"], s["scored_count"]
        assert cells[5] == f"{passed / scored * 100:.1f}% ({passed}/{scored})"  # the run's own report's rate
        assert cells[4] == str(s["case_count"])
        for i, name in enumerate(faulty["report"]["summary"]["dimensions"]):
            got = s["dimensions"].get(name)
            p, n = (got["verdict_counts"]["PASS"], got["scored_count"]) if got else (0, 0)
            assert cells[7 + i] == (f"{p / n * 100:.1f}% ({p}/{n})" if n else "—"), (run_id, name)
        assert cells[2] == f"<code>{report['run']['model']}</code>"
    assert re.search(rf'<tr data-run="{subset}".*?<td class="differs">case selection</td>', section, re.S)
    assert re.search(rf'<tr data-run="{faulty["run_id"]}" class="here">', section)
    alone = tmp_path / "alone.html"
    assert cli("report", elsewhere, "--db", str(db), "--format", "html", "--out", str(alone)).returncode == 0
    assert 'id="suite-only"' in alone.read_text(encoding="utf-8")


@pytest.fixture
def live_page(tmp_path):
    return html_pages.live_page(tmp_path)


def test_the_live_page_shows_the_window_and_the_trend(live_page):
    html = live_page.read_text(encoding="utf-8")
    assert '<dd id="count-cases">2</dd>' in html and '<span id="pass-rate">50.0%</span>' in html
    assert "Trend by service.version" in html and "shop · 1.0" in html
    assert "UNKNOWN_TOOL" in html and HOSTILE_TOOL not in html and "<img" not in html
    assert html.count("<script") == 2
    # no LLM span: the calls the tool spans show, each with its arguments and its (hostile) result
    assert html.count(f'<pre class="conv-result">{htmllib.escape(HOSTILE_TEXT)}</pre>') == 2
    assert "calls no recorded response shows" in html and "The trace does not record the request." in html
