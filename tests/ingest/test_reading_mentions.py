"""The reading pass's test for text that may name a tool call (`extract.reading._mentions`)
answers exactly as its case-blind pattern, on every text — including the letters whose case
folding goes beyond ASCII (ſ, ı, İ, K) — while skipping the pattern's scan of text that cannot
match (decision 373: that scan was most of ingest's time)."""

from __future__ import annotations

import random

from traceladder.extract.tool_items import _MENTIONS, _mentions

TRICKY = [
    "TOOL_CALL", "tool_uſe", "funct\u0131on_call", "Execute-Tool", "function call", "FunctionCall",
    "toolinvocation", "nothing here", "tooL-Use", "İİİ tool_use", "x" * 5000 + "tool_calls",
    "execute-tool", "executetool", "ex tool-call", "ﬁ function_call", "",
]  # fmt: skip


def test_it_answers_as_the_pattern_on_tricky_and_random_text() -> None:
    for text in TRICKY:
        assert _mentions(text) == (_MENTIONS.search(text) is not None), text
    rng = random.Random(7)
    alphabet = "toolfunctexecuseinvcaTOOLFUNCTEXUSIſıİK_- "
    for _ in range(50_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        assert _mentions(text) == (_MENTIONS.search(text) is not None), text
