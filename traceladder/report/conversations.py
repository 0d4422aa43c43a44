"""A report's conversations (issue 33): ReportV1's optional `summary.conversations` block and
`conversations` section, and their lines in the terminal text. Pure: rows in, dicts and text out.

A conversation is shown as its turns — each turn's user message, its calls and its verdict — then
the conversation's verdict and the turn that decided it (0-based in the data, as
`conversation_results.deciding_turn`; `turn N` counts from 1 where a person reads it, as a
result's name does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from traceladder.evaluate.rungs.types import SCORED, VERDICTS, VerdictValue
from traceladder.report.build import accuracy_of
from traceladder.report.documents import (
    Conversation,
    ConversationBlock,
    ConversationFinding,
    ConversationTurn,
)
from traceladder.text import printable

if TYPE_CHECKING:  # types only: shaping a conversation never imports DuckDB
    from traceladder.store.conversation_report import ConversationRows

MESSAGE_CHARS = 200  # a turn's user message in the text rendering, at most
TEXT_LIMIT = 20  # conversations that did not pass, listed in the text rendering


def conversation_block(counts: Mapping[str, int]) -> ConversationBlock:
    """`summary.conversations`: how many conversations the report shows, their verdicts, and their
    pass rate PASS / (PASS + FAIL), defined as the traces' is."""
    verdict_counts: dict[str, int] = {
        v: counts.get(v, 0) for v in VERDICTS if v != VerdictValue.NOT_EVALUATED or counts.get(v)
    }
    return {
        "conversation_count": sum(verdict_counts.values()),
        "verdict_counts": verdict_counts,
        "scored_count": sum(verdict_counts[v] for v in SCORED),
        "accuracy": accuracy_of(verdict_counts),
    }


def conversation_entry(rows: ConversationRows, messages: Mapping[str, str | None]) -> Conversation:
    """One entry of ReportV1's `conversations`: `messages` is each turn's trace id → the user's
    message it answers (None where no span recorded it)."""
    entry: Conversation = {
        "conversation_id": rows.conversation_id,
        "case_id": rows.case_id,
        "repeat_index": rows.repeat_index,
        "linked_by": rows.linked_by,
        "verdict": rows.verdict,
        "deciding_turn": rows.deciding_turn,
        "reason": rows.reason,
        # the store reads exactly the columns of a finding and of a turn (store.conversation_report)
        "findings": cast(list[ConversationFinding], list(rows.findings)),
        "turns": [_turn(turn, messages) for turn in rows.turns],
    }
    return entry


def _turn(row: Mapping[str, Any], messages: Mapping[str, str | None]) -> ConversationTurn:
    return cast(ConversationTurn, {**row, "user_message": messages.get(row["trace_id"])})


def conversation_name(entry: Mapping[str, Any]) -> str:
    """How a conversation is named: its case (`#repeat` for a repeat), else its id."""
    if entry["case_id"]:
        return entry["case_id"] + (f"#{entry['repeat_index']}" if entry["repeat_index"] else "")
    return str(entry["conversation_id"])


def _call_text(call: Mapping[str, Any]) -> str:
    raw = call["arguments_raw"]
    text = f"{call['tool']}({raw if raw is not None else ''})"
    return text + (" → error" if call["status"] == "error" else "")


def _clip(text: str, chars: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


def conversation_lines(entry: Mapping[str, Any]) -> list[str]:
    """A conversation as plain lines: its verdict and what decided it, then each turn's verdict,
    the user's message and the calls, then its conversation-scope findings."""
    decided = entry["deciding_turn"]
    head = f"{conversation_name(entry)}  {entry['verdict']}  ({len(entry['turns'])} turns"
    head += f", decided by turn {decided + 1})" if decided is not None else ")"
    lines = [head + f": {entry['reason']}"]
    for turn in entry["turns"]:
        said = turn["user_message"]
        lines.append(
            f"  turn {turn['turn'] + 1}  {turn['verdict']}  user: "
            + (repr(_clip(said, MESSAGE_CHARS)) if said is not None else "(not recorded)")
        )
        calls = [_call_text(c) for c in turn["calls"]]
        lines.append("    calls: " + ("; ".join(calls) if calls else "none"))
    for finding in entry["findings"]:
        at = f"turn {finding['turn'] + 1}" if finding["turn"] is not None else "the conversation"
        lines.append(f"  {finding['finding_class']} at {at}: {finding['message']}")
    return lines


def conversations_text(block: Mapping[str, Any], failing: Iterable[Sequence[Mapping[str, Any]]]) -> str:
    """The terminal's conversations section: their counts and pass rate, then the first
    `TEXT_LIMIT` that did not pass (`failing`: their entries, a page at a time), each as its
    turns, as lines without a final newline. Everything a producer sent is made printable (no
    terminal escapes)."""
    counts = block["verdict_counts"]
    said = ", ".join(f"{v} {n}" for v, n in counts.items() if n)
    rate = "—" if block["accuracy"] is None else f"{block['accuracy']:.1%}"
    lines = ["", f"Conversations: {block['conversation_count']} ({said}) · pass rate {rate}"]
    total = block["conversation_count"] - counts.get(VerdictValue.PASS, 0) - counts.get(VerdictValue.SKIP, 0)
    shown = 0
    for page in failing:
        for entry in page:
            if shown == TEXT_LIMIT:
                break
            lines += [printable(line) for line in conversation_lines(entry)]
            shown += 1
        if shown == TEXT_LIMIT:
            break
    if total > shown:
        lines.append(f"… {total - shown} more in the JSON report")
    return "\n".join(lines)
