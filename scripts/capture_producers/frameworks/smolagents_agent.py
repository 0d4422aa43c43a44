"""smolagents ToolCallingAgent on OpenAIModel (chat completions), traced by
openinference-instrumentation-smolagents."""

from __future__ import annotations

from typing import Any

from frameworks import (
    AGENT_NAME,
    API_KEY,
    MODEL,
    SYSTEM_PROMPT,
    TOOL_FUNCTIONS,
    FrameworkConfig,
    FrameworkRun,
)


def _tool_call_turns(user_text: str) -> int:
    """How many tool-call turns the scenario's script has (its last turn is plain text).

    A ToolCallingAgent finishes only through a `final_answer` tool call (it sends
    tool_choice="required"); a plain-text turn is an AgentParsingError and the agent asks again,
    past the end of the script (500 -> AgentGenerationError, raised out of run()). So max_steps is
    set to the number of tool-call turns: after them smolagents' max-steps path
    (provide_final_answer: one more request, without tools, never streamed) takes the script's text
    turn as the final answer and run() returns normally."""
    from model_server import SCRIPTS

    script = next(s for s in SCRIPTS.values() if s["user"] == user_text)
    return sum(1 for turn in script["turns"] if "tool_calls" in turn)


def _run(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    tp = pipeline.make_tracer_provider()
    SmolagentsInstrumentor().instrument(tracer_provider=tp)

    from smolagents import OpenAIModel, ToolCallingAgent, tool

    model = OpenAIModel(model_id=MODEL, api_base=base_url, api_key=API_KEY, client_kwargs={"max_retries": 0})
    agent = ToolCallingAgent(
        tools=[tool(fn) for fn in TOOL_FUNCTIONS],
        model=model,
        instructions=SYSTEM_PROMPT,
        name=AGENT_NAME.replace("-", "_"),  # smolagents wants a Python identifier
        stream_outputs=streaming,
        max_steps=_tool_call_turns(user_text),
        verbosity_level=0,
    )
    answer = agent.run(user_text)  # the final answer (max-steps path: provide_final_answer's text)
    errors = [
        f"step {getattr(s, 'step_number', '?')}: {type(s.error).__name__}: {s.error}"
        for s in agent.memory.steps
        if getattr(s, "error", None) is not None
    ]
    if answer is None or str(answer).startswith("Error in generating final LLM output"):
        return FrameworkRun(None, "smolagents gave no final answer", "\n".join(errors)[:4000])
    return FrameworkRun(str(answer), None, "\n".join(errors)[:4000] or None)


CONFIG = FrameworkConfig(
    name="smolagents",
    framework="smolagents",
    description="smolagents ToolCallingAgent on OpenAIModel (chat completions), traced by "
    "openinference-instrumentation-smolagents",
    env={"OPENINFERENCE_HIDE_INPUTS": "false", "OPENINFERENCE_HIDE_OUTPUTS": "false"},
    packages=[
        "smolagents",
        "openinference-instrumentation-smolagents",
        "openinference-instrumentation",
        "openinference-semantic-conventions",
        "openai",
        "opentelemetry-api",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
        "opentelemetry-exporter-otlp-json-http",
        "opentelemetry-exporter-otlp-json-file",
    ],
    run=_run,
    notes=[
        "agent: ToolCallingAgent(tools=[tool(get_weather), tool(get_time), tool(book_table)], "
        "model=OpenAIModel(model_id, api_base, api_key, client_kwargs={'max_retries': 0}), "
        "instructions=SYSTEM_PROMPT, name='travel_agent', stream_outputs=<mode>, max_steps=<tool-call turns "
        "of the script>)",
        "adaptation: smolagents ends only on a final_answer tool call (requests carry "
        "tool_choice='required'); "
        "the script's final text turn is reached through the max-steps path instead: max_steps = the "
        "script's "
        "tool-call turns, then provide_final_answer() makes one more request (no tools, never streamed) and "
        "returns its text as run()'s answer; the last memory step has AgentMaxStepsError. "
        "Without it the text turn is an AgentParsingError, the next request gets the "
        "server's 500, run() raises AgentGenerationError, and the instrumentation never ends the "
        "AGENT root span "
        "(it is not exported; the Step spans are orphans)",
        "content capture: OpenInference records inputs/outputs by default; "
        "OPENINFERENCE_HIDE_INPUTS/OUTPUTS=false set explicitly (TraceConfig defaults)",
        "smolagents' system prompt is its own template (tool list + instructions), not SYSTEM_PROMPT alone",
    ],
)
