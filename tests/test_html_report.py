"""`traceladder report --format html` (issue 14): one self-contained page per run, per comparison and
per live window. The browser test opens the real file in headless Chromium (Debian's package, driven
by Playwright with `executable_path` — never `playwright install`) and checks what a reader sees
against `report --format json`; the tests without a browser check the file itself: nothing fetched,
hostile data escaped, the size."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import ROOT, cli, rows
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


def _kv(stdout: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in stdout.splitlines() if re.match(r"^[a-z_]+=", line))


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
    run_id, other = _kv(first.stdout)["run_id"], _kv(second.stdout)["run_id"]
    report = json.loads(cli("report", run_id, "--db", str(db), "--format", "json").stdout)
    done = cli("report", run_id, "--db", str(db), "--format", "html")
    assert done.returncode == 0, done.stderr
    page = Path(_kv(done.stdout)["html_path"])
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
    details = {case["trace_id"]: {"spans": [span], "results": {1: HOSTILE_TEXT}, "final_text": HOSTILE_TEXT}}
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
    assert done.returncode == 0 and _kv(done.stdout)["html_path"] == str(out)
    flipped = rows(
        faulty["db"],
        "SELECT count(*) FROM (SELECT case_id FROM case_results GROUP BY case_id "
        "HAVING count(DISTINCT verdict) > 1)",
    )[0][0]
    html = out.read_text(encoding="utf-8")
    assert flipped > 0 and f'<span id="flip-count">{flipped}</span>' in html
    assert html.count("→") >= flipped and 'id="delta-dimensions"' in html and "D4" in html


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
    path = Path(_kv(done.stdout)["html_path"])
    assert path.parent == tmp_path / "reports" and path.name.startswith("live-")
    return path


def test_the_live_page_shows_the_window_and_the_trend(live_page):
    html = live_page.read_text(encoding="utf-8")
    assert '<dd id="count-cases">2</dd>' in html and '<span id="pass-rate">50.0%</span>' in html
    assert "Trend by service.version" in html and "shop · 1.0" in html
    assert "UNKNOWN_TOOL" in html and HOSTILE_TOOL not in html and "<img" not in html
    assert html.count("<script") == 2


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


def test_hostile_names_do_not_run_in_a_browser(browser, live_page):
    w = Watched(browser)
    w.open(live_page)
    w.page.select_option("#f-verdict", "FAIL")
    case = w.page.locator("tbody.case:not([hidden])")
    case.locator("details > summary").click()
    assert HOSTILE_TOOL in case.inner_text()  # shown as text …
    assert HOSTILE_TEXT in case.locator("pre.result").inner_text()
    assert w.page.evaluate("document.querySelectorAll('script').length") == 2  # … never as markup
    w.assert_quiet()  # and no dialog opened
