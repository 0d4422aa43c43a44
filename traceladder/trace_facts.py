"""What a trace says about itself besides its calls: where it ran and how long it took.

Read from the trace index by storage (`store.readers`), carried to the rungs in `TraceInputs`
(the invariant rung reads the step budget and latency from it). Plain data with no dependencies, so
storage and the evaluators share it without either importing the other, and it travels to worker
processes with the calls.
"""

from __future__ import annotations

from typing import NamedTuple


class TraceFacts(NamedTuple):
    service: str | None = None  # resource service.name
    service_version: str | None = None  # resource service.version: the deploy
    environment: str | None = None  # deployment.environment.name (or the older deployment.environment)
    agent: str | None = None  # gen_ai.agent.name on the agent span, when there is one
    model_turns: int = 0  # model requests (chat / LLM spans) in the trace
    duration_ms: float | None = None  # root span end - start; None when unknown or negative (clock skew)
    start_ns: int | None = None  # root span start (unix ns)
