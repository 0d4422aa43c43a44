"""The model endpoint's two checks a run makes: one `GET /models` before the first case, and the
one line a run the breaker stopped ends with (the cause, what is kept, how to go on)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from traceladder.endpoints.probe import EndpointUnusable, check_endpoint, describe
from traceladder.produce.agent.breaker import Trip
from traceladder.produce.agent.client import ModelChoice
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.loop import AgentOutcome
from traceladder.suite.cases.model import Case

_Finished = tuple[Case, int, AgentOutcome]


def check_model_endpoint(choice: ModelChoice, client_factory: Callable[[], Any], config: AgentConfig) -> None:
    """The endpoint check before any case: one `GET /models` (`endpoints.probe`)."""
    client = client_factory()
    try:
        check_endpoint(
            client, what="the model endpoint", url=choice.shown_url, key_note=_key_note(choice),
            timeout_s=min(config.request_timeout_s, 30.0),
        )  # fmt: skip
    finally:
        client.close()


def _key_note(choice: ModelChoice) -> str:
    if choice.key_source:
        return f"the key came from {choice.key_source}"
    return "no API key was sent to this host (set OPENAI_API_KEY for it)"


def stopped_run(trip: Trip[_Finished], choice: ModelChoice, run_id: str, kept: int) -> EndpointUnusable:
    """The one line a stopped run ends with: the cause, what is kept, how to go on."""
    message = trip.dropped[-1][2].error_message or ""
    # A connection error's message ends with its cause in parentheses (`produce.agent.retry`).
    connection = trip.error_type == "connection" and message.endswith(")")
    cause = message.rsplit("(", 1)[-1][:-1] if connection else None
    reason = describe(
        "the model endpoint", choice.shown_url, trip.error_type, cause, _key_note(choice), model=choice.model
    )
    when = (
        "before any case worked"
        if trip.decisive
        else f"after {trip.streak} cases in a row ended with {trip.error_type}"
    )
    return EndpointUnusable(
        f"run stopped {when}: {reason}; {kept} finished case(s) kept, {len(trip.dropped)} not — fix "
        f"the endpoint, then `traceladder run --resume {run_id}`"
    )
