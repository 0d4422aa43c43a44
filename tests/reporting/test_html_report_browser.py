"""What a reader of the HTML report sees in a browser: the real page opened in headless Chromium
(Debian's package, driven by Playwright with `executable_path` — never `playwright install`) and
checked against `report --format json`: the numbers, the filters, a case's evidence and
conversation, the page without JavaScript, chart labels that fit, hostile names shown as text and
never run, and nothing fetched beyond the file itself."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import html_pages
import pytest
from conftest import ROOT, cli, cli_in_process, out_values, rows
from html_pages import HOSTILE_ARG, HOSTILE_TEXT, HOSTILE_TOOL, instruction

from traceladder.report.html import render_html


@pytest.fixture(scope="module")
def faulty(faulty_suite, tmp_path_factory):
    """The session's sim:faulty run (seed 0: fc-d1-002 calls get_order with W499 instead of
    W441), its JSON report and its HTML page (written outside the store's folder)."""
    db, result = faulty_suite
    run_id = out_values(result)["run_id"]
    report = json.loads(
        cli_in_process("report", run_id, "--db", str(db), "--format", "json").stdout
    )  # set-up
    page = tmp_path_factory.mktemp("browser") / "page.html"
    done = cli("report", run_id, "--db", str(db), "--format", "html", "--out", str(page))
    assert done.returncode == 0, done.stderr
    return {"db": db, "run_id": run_id, "report": report, "page": page}


@pytest.fixture
def live_page(tmp_path):
    return html_pages.live_page(tmp_path)


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
    assert request.is_visible() and request.inner_text().endswith(instruction("fc-d1-002"))
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
