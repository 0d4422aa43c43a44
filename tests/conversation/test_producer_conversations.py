"""Real producers' four-turn conversations (tests/fixtures/conversations), turn by turn and whole.

For every producer, mode and variant: each turn's calls are exactly what the scripted model sent
in that turn (count, order, tool, call id, arguments), never an earlier turn's; no per-trace check
(a step budget of 2, duplicates forbidden) fires; the turns are grouped into one conversation, in
order, linked the way the producer allows (its own id, else the history); and the conversation's
verdict is the script's truth — a cancellation confirmed in turn 3 passes, one never confirmed
fails the conversation with UNCONFIRMED_ACTION decided by the request's turn while that turn's own
verdict stays PASS.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_suites import session_folder

from conversation.producer_conversations import NAMES, expected, observe, turn_calls, turn_traces

# What ties each producer's turns together (docs/conversations.md, "What ties turns together").
LINKED_BY = {
    "langgraph-openinference": "session.id",
    "langgraph-openllmetry": "gen_ai.conversation.id",
    "openai-agents-otel": "history",
    "pydantic-ai": "gen_ai.conversation.id",
    "strands": "history",
    "openai-openinference": "history",
    "openai-otel-genai": "history",
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shared by the session's workers: each fixture is ingested and evaluated once per session."""
    folder = session_folder(tmp_path_factory) / "producer-conversations"
    folder.mkdir(exist_ok=True)
    return folder


def test_every_producer_is_captured() -> None:
    producers = {n.split("/")[0] for n in NAMES}
    assert producers == set(LINKED_BY), "a producer's fixtures are missing"


@pytest.mark.parametrize("name", NAMES)
def test_each_turn_holds_exactly_the_calls_sent_in_it(name: str, workdir: Path) -> None:
    observed = observe(name, workdir)
    for turn, traces in zip(expected(name)["turns"], turn_traces(name, observed), strict=True):
        # the argument text byte for byte: every producer here records what the model sent
        sent = [(c["name"], c["id"], c["arguments_raw"]) for c in turn["sent_calls"]]
        got = turn_calls(observed, traces)
        assert got == sent, f"turn {turn['turn']}"


@pytest.mark.parametrize("name", NAMES)
def test_each_turns_history_links_to_the_turns_that_made_the_calls(name: str, workdir: Path) -> None:
    """The earlier turns' calls a turn's input repeats are its prior calls, each linked to the trace
    of the turn that made it — all of them, since none of these producers trims the history."""
    observed = observe(name, workdir)
    made_in: dict[str, str] = {}
    for turn, traces in zip(expected(name)["turns"], turn_traces(name, observed), strict=True):
        got = sorted({link for t in traces for link in observed.prior.get(t, [])}, key=str)
        assert got == sorted(made_in.items(), key=str), f"turn {turn['turn']}"
        for tool, call_id, _ in turn_calls(observed, traces):
            made_in[call_id] = next(
                t for t in traces if (tool, call_id) in {c[:2] for c in observed.calls[t]}
            )


@pytest.mark.parametrize("name", NAMES)
def test_no_per_trace_check_fires_on_an_earlier_turns_call(name: str, workdir: Path) -> None:
    observed = observe(name, workdir)
    assert [code for _, code in observed.findings if code in ("TOO_MANY_TOOL_CALLS", "DUPLICATE_CALL")] == []
    for traces in turn_traces(name, observed):
        assert {observed.verdicts.get(t) for t in traces} == {"PASS"}


@pytest.mark.parametrize("name", NAMES)
def test_the_turns_are_one_conversation_in_order(name: str, workdir: Path) -> None:
    observed = observe(name, workdir)
    per_turn = turn_traces(name, observed)
    grouped = [observed.conversation[t] for traces in per_turn for t in traces]
    assert len({cid for cid, _, _ in grouped}) == 1, grouped
    assert [turn for _, turn, _ in grouped] == list(range(len(grouped)))
    how = {linked_by for _, turn, linked_by in grouped if turn > 0}
    assert how == {LINKED_BY[name.split("/")[0]]}


@pytest.mark.parametrize("name", NAMES)
def test_the_conversation_verdict_is_the_scripts_truth(name: str, workdir: Path) -> None:
    observed = observe(name, workdir)
    truth = expected(name)["truth"]
    (cid,) = {observed.conversation[t][0] for traces in turn_traces(name, observed) for t in traces}
    (result,) = [r for r in observed.results if r["conversation_id"] == cid]
    assert (result["verdict"], result["deciding_turn"]) == (truth["verdict"], truth["deciding_turn"])
    classes = [f["finding_class"] for f in observed.conversation_findings if f["conversation_id"] == cid]
    assert classes == ([truth["finding"]] if truth["finding"] else [])
