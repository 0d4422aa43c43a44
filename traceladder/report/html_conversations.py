"""The HTML page's conversations section (issue 33): each conversation as its turns — the user's
message, the calls and the verdict of each turn — under its verdict and the turn that decided it.
Pure: ReportV1's `conversations` entries in, escaped HTML out (every producer's text through `esc`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from traceladder.report.conversations import conversation_name
from traceladder.report.html_cases import verdict_badge
from traceladder.report.html_text import clip, esc, pct, table, td

CONVERSATION_LIMIT = 200  # conversations shown on a page; the summary counts every one
_TEXT = 400  # characters of a user message or a call's arguments shown


def _calls(calls: Sequence[Mapping[str, Any]]) -> str:
    if not calls:
        return '<span class="muted">no call</span>'
    return "<br>".join(
        f"<code>{esc(c['tool'])}({esc(clip(c['arguments_raw'] or '', _TEXT))})</code>"
        + (" <b>error</b>" if c["status"] == "error" else "")
        for c in calls
    )


def _said(message: str | None) -> str:
    return esc(clip(message, _TEXT)) if message is not None else '<span class="muted">not recorded</span>'


def _conversation(entry: Mapping[str, Any]) -> str:
    decided = entry["deciding_turn"]
    head = (
        f'<h3 class="conversation">{esc(conversation_name(entry))} {verdict_badge(entry["verdict"])}'
        f' <span class="muted">{len(entry["turns"])} turns'
        + (f", decided by turn {decided + 1}" if decided is not None else "")
        + f" · tied by {esc(entry['linked_by'])}</span></h3><p>{esc(entry['reason'])}</p>"
    )
    rows = (
        f'<tr class="{"decided" if turn["turn"] == decided else ""}">{td(turn["turn"] + 1, "num")}'
        f"{td(verdict_badge(turn['verdict']))}{td(_said(turn['user_message']))}{td(_calls(turn['calls']))}</tr>"
        for turn in entry["turns"]
    )
    findings = "".join(
        f"<li>{esc(f['finding_class'])} at "
        + (f"turn {f['turn'] + 1}" if f["turn"] is not None else "the conversation")
        + f": {esc(f['message'])}</li>"
        for f in entry["findings"]
    )
    return (
        head
        + table(("turn", "verdict", "user", "calls"), rows)
        + (f"<ul>{findings}</ul>" if findings else "")
    )


def conversations_section(block: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> str:
    """The section: the conversations' counts and pass rate, then each shown conversation (the
    first `CONVERSATION_LIMIT`, in report order) as its turns."""
    counts = ", ".join(f"{esc(v)} {n}" for v, n in block["verdict_counts"].items() if n)
    out = (
        f'<section id="conversations"><h2>Conversations</h2><p>{block["conversation_count"]} conversations '
        f"({counts}); pass rate {pct(block['accuracy'])} of {block['scored_count']} scored. "
        "A multi-turn case counts once in the summary, with its conversation's verdict.</p>"
    )
    out += "".join(_conversation(e) for e in entries)
    hidden = block["conversation_count"] - len(entries)
    if hidden > 0:
        out += f'<p class="muted">… {hidden} more in the JSON report.</p>'
    return out + "</section>"
