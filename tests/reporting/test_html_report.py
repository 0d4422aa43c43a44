"""`traceladder report --format html` (issue 14): one self-contained page per run, per comparison and
per live window. The browser test opens the real file in headless Chromium (Debian's package, driven
by Playwright with `executable_path` — never `playwright install`) and checks what a reader sees
against `report --format json`; the tests without a browser check the file itself: nothing fetched,
hostile data escaped, the size."""

from __future__ import annotations

import copy
import html as htmllib
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import ROOT, cli, out_values, rows
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from traceladder.reporting.html import render_html

HOSTILE_TOOL = "<script>alert('tool')</script>"
HOSTILE_TEXT = "</script><script>alert('text')</script><!--"
HOSTILE_ARG = '<img src=x onerror="alert(1)">'
MEGABYTE = 1_000_000
CASES_FILE = ROOT / "traceladder" / "domain" / "retail" / "data" / "retail_fc.jsonl"
NOTE = " (not evaluated: invariants)"  # what the fold appends to a PASS when invariants could not run


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    """A sim:faulty run (seed 0: fc-d1-002 calls get_order with W499 instead of W441), its JSON
    report, its HTML page; and a second run (seed 1) in the same store to compare with."""
    folder = tmp_path_factory.mktemp("html")
    db = folder / "store.duckdb"
    first = cli("run", "--model", "sim:faulty", "--seed", "0", "--db", str(db), "--no-report")
    second = cli("run", "--model", "sim:faulty", "--seed", "1", "--db", str(db), "--no-report")
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert cli("evaluate", "--db", str(db)).returncode == 0
    run_id, other = out_values(first)["run_id"], out_values(second)["run_id"]
    report = json.loads(cli("report", run_id, "--db", str(db), "--format", "json").stdout)
    done = cli("report", run_id, "--db", str(db), "--format", "html")
    assert done.returncode == 0, done.stderr
    page = Path(out_values(done)["html_path"])
    assert page == folder / "reports" / f"{run_id}.html"  # the default: beside the JSON report
    return {"db": db, "run_id": run_id, "other": other, "report": report, "page": page}


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


def _instruction(case_id: str) -> str:
    """What the user asked in the case, as the case file has it (the oracle: not read from spans)."""
    for line in CASES_FILE.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["id"] == case_id:
            return case["instruction"]
    raise AssertionError(case_id)


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
    request = said.index(htmllib.escape(_instruction("fc-d1-002")))
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
        set(report["summary"]["taxonomy_counts"]) <= labels and set(report["summary"]["dimensions"]) <= labels
    )


def test_the_not_evaluated_note_is_said_once(faulty):
    """The JSON keeps each PASS's explanation as the fold wrote it; the page says which rungs could
    not run once, in the ladder section, with the count and the reason."""
    html, results = faulty["page"].read_text(encoding="utf-8"), faulty["report"]["results"]
    noted = [c for c in results if c["verdict"] == "PASS" and c["explanation"].endswith(NOTE)]
    assert len(noted) == faulty["report"]["summary"]["verdict_counts"]["PASS"] > 0
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
    for run_id in listed:
        report = json.loads(cli("report", run_id, "--db", str(db), "--format", "json").stdout)
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


def _live_store(tmp_path: Path) -> Path:
    """Two live traces of deploy shop 1.0, judged by rung 1 against the retail tools: one calls a
    tool named like a script tag (UNKNOWN_TOOL), one a real tool correctly."""
    db, memory = tmp_path / "live.duckdb", InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop", "service.version": "1.0"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("shop")
    for tool, args in ((HOSTILE_TOOL, json.dumps({"x": HOSTILE_ARG})), ("get_order", '{"order_id": "W441"}')):
        with tracer.start_as_current_span(
            "invoke_agent shop", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.arguments": args,
                "gen_ai.tool.call.result": HOSTILE_TEXT,
            }
            with tracer.start_as_current_span(f"execute_tool {tool}", attributes=attrs):
                pass
    (tmp_path / "t.pb").write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())
    assert cli("ingest", "--db", str(db), str(tmp_path / "t.pb")).returncode == 0
    done = cli("evaluate", "--db", str(db), "--domain", "retail")
    assert done.returncode == 0, done.stderr
    return db


@pytest.fixture
def live_page(tmp_path):
    db = _live_store(tmp_path)
    done = cli("report", "--db", str(db), "--format", "html", "--live", "--since", "2")
    assert done.returncode == 0, done.stderr
    path = Path(out_values(done)["html_path"])
    assert path.parent == tmp_path / "reports" and path.name.startswith("live-")
    return path


def test_the_live_page_shows_the_window_and_the_trend(live_page):
    html = live_page.read_text(encoding="utf-8")
    assert '<dd id="count-cases">2</dd>' in html and '<span id="pass-rate">50.0%</span>' in html
    assert "Trend by service.version" in html and "shop · 1.0" in html
    assert "UNKNOWN_TOOL" in html and HOSTILE_TOOL not in html and "<img" not in html
    assert html.count("<script") == 2
    # no LLM span: the calls the tool spans show, each with its arguments and its (hostile) result
    assert html.count(f'<pre class="conv-result">{htmllib.escape(HOSTILE_TEXT)}</pre>') == 2
    assert "calls no recorded response shows" in html and "The trace does not record the request." in html


# -- in a real browser ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium") or next((p for p in ("/usr/bin/chromium",) if Path(p).exists()), None)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    missing = [
        what
        for what, absent in (
            ("Chromium (`apt-get install chromium`)", chromium is None),
            ("Playwright (`pip install playwright`)", sync_playwright is None),
        )
        if absent
    ]
    if missing:
        pytest.skip(
            f"the HTML report's browser test needs {' and '.join(missing)}; it drives Debian's "
            "chromium and never downloads a browser (no `playwright install`)"
        )
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium)
        yield launched
        launched.close()


class Watched:
    """A page whose every request, console error and dialog is recorded."""

    def __init__(self, browser, *, javascript: bool = True) -> None:
        self.context = browser.new_context(
            viewport={"width": 1280, "height": 1000}, java_script_enabled=javascript
        )
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on(
            "console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None
        )
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def open(self, path: Path) -> None:
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)

    def assert_quiet(self) -> None:
        assert self.requests == [self.url]  # the file itself, and nothing else
        assert self.errors == [] and self.dialogs == []
        self.context.close()


def _visible_cases(page) -> list[str]:
    return page.eval_on_selector_all(
        "tbody.case:not([hidden]) > tr.row > th", "cells => cells.map(c => c.textContent.trim())"
    )


def test_in_a_browser(browser, faulty, tmp_path):
    report, s = faulty["report"], faulty["report"]["summary"]
    counts = s["verdict_counts"]
    w = Watched(browser)
    w.open(faulty["page"])
    page = w.page
    page.screenshot(path=str(tmp_path / "report.png"))
    if os.environ.get("TRACELADDER_UPDATE_SCREENSHOT") == "1":
        page.screenshot(path=str(ROOT / "docs" / "report.png"))
    # the numbers, as `report --format json` has them
    assert page.inner_text("#pass-rate") == f"{counts['PASS'] / (counts['PASS'] + counts['FAIL']) * 100:.1f}%"
    assert (page.inner_text("#passed"), page.inner_text("#scored")) == (
        str(counts["PASS"]),
        str(s["scored_count"]),
    )
    for verdict, n in counts.items():
        assert page.inner_text(f"#count-{verdict}") == str(n)
    top = next(r for r in s["ladder"] if r["name"] == "judge")  # rung 5 is the top rung
    assert page.inner_text("#reached-top") == str(top["statuses"]["pass"] + top["statuses"]["fail"])
    call_match = page.locator('table.ladder tr[data-rung="call_match"] td.settled-fail')
    assert call_match.inner_text() == str(
        next(r for r in s["ladder"] if r["name"] == "call_match")["settled_fail"]
    )
    # filters: the rows shown are the JSON's
    assert len(_visible_cases(page)) == s["case_count"]
    page.select_option("#f-verdict", "FAIL")
    assert (
        len(_visible_cases(page)) == counts["FAIL"]
        and page.inner_text("#f-count") == f"showing {counts['FAIL']} of 72"
    )
    page.select_option("#f-dimension", "D2")
    expected = sorted(
        c["case_id"] for c in report["results"] if c["verdict"] == "FAIL" and c["dimension"] == "D2"
    )
    assert sorted(_visible_cases(page)) == expected
    page.click("#f-reset")
    page.select_option("#f-tool", "get_order")
    assert sorted(_visible_cases(page)) == sorted(
        c["case_id"]
        for c in report["results"]
        if any(x["tool"] == "get_order" for x in c["golden"] + c["actual"])
    )
    page.click("#f-reset")
    page.fill("#f-search", "d1-002")
    assert _visible_cases(page) == ["fc-d1-002"]
    # a known finding, with its argument difference, once the case is opened
    case = page.locator("tbody.case", has=page.locator("th", has_text="fc-d1-002"))
    diff_row = case.locator("table.diffs tr.diff-row")
    assert not diff_row.is_visible()
    case.locator("details > summary").click()
    cells = [c.strip() for c in diff_row.locator("td").all_inner_texts()]
    assert cells == [
        "2 call_match",
        "#1 get_order",
        "order_id",
        '"W441"',
        '≠ "W499"',
        "exact",
        "PARAM_HALLUCINATED_ID",
    ]
    assert "no order W499" in case.locator("pre.result").inner_text()  # the tool's result
    # the conversation: the request, the call with its arguments and result, the final answer
    said = case.locator("ol.conversation")
    request = said.locator("li.said-user")
    assert request.is_visible() and request.inner_text().endswith(_instruction("fc-d1-002"))
    call = said.locator("li.conv-call")
    assert call.is_visible() and call.locator(".conv-tool").inner_text() == "get_order"
    assert json.loads(call.locator("pre.conv-args").inner_text()) == {"order_id": "W499"}
    assert call.locator("pre.conv-result").is_visible()
    assert "no order W499" in call.locator("pre.conv-result").inner_text()
    ((answer,),) = rows(faulty["db"], "SELECT final_text FROM case_runs WHERE case_id = 'fc-d1-002' "
                        f"AND trace_id IN (SELECT trace_id FROM trace_results WHERE run_id = '{faulty['run_id']}')")  # fmt: skip
    final = said.locator("li.said-answer blockquote.answer")
    assert final.is_visible() and final.inner_text() == answer
    assert case.locator("svg.waterfall rect").count() == 4  # invoke_agent, chat, execute_tool, chat
    # sorting by case id, descending, puts the last case first
    page.click("#f-reset")
    header = page.locator('#case-table th[data-key="case"] button')
    header.click()
    header.click()
    assert _visible_cases(page)[0] == max(c["case_id"] for c in report["results"])
    w.assert_quiet()
    # without JavaScript: the numbers and the evidence are there, the controls that need it are not
    quiet = Watched(browser, javascript=False)
    quiet.open(faulty["page"])
    assert quiet.page.inner_text("#pass-rate") == f"{counts['PASS'] / s['scored_count'] * 100:.1f}%"
    assert quiet.page.is_visible("#pass-rate") and not quiet.page.is_visible("#filters")
    assert quiet.page.locator("tbody.case:not([hidden])").count() == s["case_count"]
    quiet.assert_quiet()


_MEASURE_LABELS = """svgs => svgs.map(svg => {
    const starts = [...svg.querySelectorAll('rect')].map(r => r.x.baseVal.value)
        .concat([...svg.querySelectorAll('line.grid')].map(l => l.x1.baseVal.value));
    const bars = Math.min(...starts);
    return [...svg.querySelectorAll('text.label')].map(t => {
        const box = t.getBBox();
        return {text: t.textContent, left: box.x, right: box.x + box.width, bars: bars};
    });
}).flat()"""


def _assert_labels_fit(page, expected: set[str]) -> None:
    """Every chart label is drawn whole inside its column: left of the bars, inside the chart."""
    measured = page.eval_on_selector_all("svg.chart, svg.waterfall", _MEASURE_LABELS)
    assert measured
    for m in measured:
        assert m["left"] >= 0 and m["right"] <= m["bars"], m
    assert expected <= {m["text"] for m in measured}


def test_chart_labels_fit_in_a_browser(browser, faulty, tmp_path):
    """On the run's page, and on a page whose classes and tools have long names (70 characters,
    Chinese, no place to break): every label is whole and none runs into the bars."""
    w = Watched(browser)
    w.open(faulty["page"])
    w.page.locator("tbody.case", has=w.page.locator("th", has_text="fc-d1-002")).locator("summary").click()
    _assert_labels_fit(w.page, {"execute_tool get_order", "2 call_match"})
    w.assert_quiet()
    report = copy.deepcopy(faulty["report"])
    long_class = "PARAM_" + "VERY_LONG_" * 6 + "NAME"
    no_break = "x" * 70
    chinese = "查询订单状态并且核对收货地址是否与用户资料中的默认地址一致的工具"
    counts = report["summary"]["taxonomy_counts"]
    counts[long_class] = counts.pop(next(iter(counts)))
    case = next(c for c in report["results"] if c["verdict"] == "FAIL")
    case["actual"][0]["tool"] = chinese
    case["golden"][0]["tool"] = no_break
    page = tmp_path / "long.html"
    page.write_text(render_html(report, {}, generated_at="now"), encoding="utf-8")
    w = Watched(browser)
    w.open(page)
    _assert_labels_fit(w.page, {long_class, no_break, chinese})
    w.assert_quiet()


def test_hostile_names_do_not_run_in_a_browser(browser, live_page):
    w = Watched(browser)
    w.open(live_page)
    w.page.select_option("#f-verdict", "FAIL")
    case = w.page.locator("tbody.case:not([hidden])")
    case.locator("details > summary").click()
    assert HOSTILE_TOOL in case.inner_text()  # shown as text …
    assert HOSTILE_TEXT in case.locator("pre.result").inner_text()
    results = case.locator("ol.conversation pre.conv-result")
    assert results.count() == 1 and results.inner_text() == HOSTILE_TEXT  # a `<script>` result, as text
    assert json.loads(case.locator("ol.conversation pre.conv-args").inner_text()) == {"x": HOSTILE_ARG}
    assert w.page.evaluate("document.querySelectorAll('script').length") == 2  # … never as markup
    w.assert_quiet()  # and no dialog opened
