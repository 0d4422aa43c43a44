"""Google GenAI (`google-genai` Python SDK, the Gemini API's `generateContent`) with
`opentelemetry-instrumentation-google-genai` (`GoogleGenAiSdkInstrumentor().instrument(
tracer_provider=tp, logger_provider=lp)`, content on the spans:
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`).

A small agent loop on the real client — the way a team calls Gemini without a framework:
`genai.Client(http_options=HttpOptions(base_url=<scripted server>, api_version="v1beta"))`,
`models.generate_content` (streaming: `generate_content_stream`, the chunks' parts joined) with the
three tools as `FunctionDeclaration`s (`parameters_json_schema`) and automatic function calling
off, each `functionCall` part run with the fake tools (`args` not an object: an error result),
every result sent back as a `functionResponse` part (`{"result": …}` or `{"error": …}`, with the
call's id) in one user turn, until a turn has no call. A `MALFORMED_FUNCTION_CALL` finish (what the
API answers for a call it cannot form: gemini_generate.py) is asked again. The loop runs inside
one attribute-less span `agent run`. No tool spans: the instrumentation traces the model calls
(and, with automatic function calling, the SDK's own tool calls — not used here).
"""

from __future__ import annotations

from typing import Any

from frameworks import API_KEY, SYSTEM_PROMPT, TOOL_FUNCTIONS, FrameworkConfig, FrameworkRun
from frameworks.anthropic_messages import tool_specs

MODEL = "gemini-2.5-flash"


def _execute(call: Any) -> dict[str, Any]:
    functions = {f.__name__: f for f in TOOL_FUNCTIONS}
    try:
        if not isinstance(call.args, dict):
            raise TypeError(f"ToolArgumentsError: args is not an object: {call.args!r}")
        return {"result": functions[call.name](**call.args)}
    except Exception as exc:  # the model gets the error back
        return {"error": f"{type(exc).__name__}: {exc}"}


def _run(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from google import genai
    from google.genai import types
    from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor

    tp = pipeline.make_tracer_provider()
    lp = pipeline.make_logger_provider()
    GoogleGenAiSdkInstrumentor().instrument(tracer_provider=tp, logger_provider=lp)
    root = base_url.removesuffix("/v1")
    client = genai.Client(api_key=API_KEY, http_options=types.HttpOptions(base_url=root, api_version="v1beta"))
    declarations = [
        types.FunctionDeclaration(name=t["name"], description=t["description"], parameters_json_schema=t["input_schema"])
        for t in tool_specs()
    ]
    config = types.GenerateContentConfig(
        system_instruction=SYSTEM_PROMPT,
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=user_text)])]
    with tp.get_tracer("capture").start_as_current_span("agent run"):
        for _ in range(8):
            if streaming:
                parts, finish = [], None
                for chunk in client.models.generate_content_stream(model=MODEL, contents=contents, config=config):
                    candidate = (chunk.candidates or [None])[0]
                    if candidate is not None:
                        parts.extend((candidate.content.parts or []) if candidate.content else [])
                        finish = candidate.finish_reason or finish
            else:
                response = client.models.generate_content(model=MODEL, contents=contents, config=config)
                candidate = response.candidates[0]
                parts = list(candidate.content.parts or []) if candidate.content else []
                finish = candidate.finish_reason
            if finish == types.FinishReason.MALFORMED_FUNCTION_CALL:
                continue  # the API could not form the call: ask again
            calls = [p.function_call for p in parts if p.function_call is not None]
            if not calls:
                return FrameworkRun("".join(p.text or "" for p in parts))
            contents.append(types.Content(role="model", parts=parts))
            contents.append(types.Content(role="user", parts=[
                types.Part(function_response=types.FunctionResponse(id=c.id, name=c.name, response=_execute(c)))
                for c in calls]))  # fmt: skip
    return FrameworkRun(None, "RuntimeError: no final answer after 8 turns")


CONFIG = FrameworkConfig(
    name="google-genai",
    framework="google-genai",
    description="google-genai Client.models.generate_content / generate_content_stream (Gemini API wire) in a "
    "hand-written loop, traced by opentelemetry-instrumentation-google-genai",
    env={"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
    packages=["google-genai", "opentelemetry-instrumentation-google-genai", "opentelemetry-util-genai",
              "opentelemetry-api", "opentelemetry-sdk"],  # fmt: skip
    run=_run,
    notes=[
        "the scripted server speaks the Gemini API (gemini_generate.py): args objects, ids sent; a call whose "
        "argument text is not an object goes out as finishReason MALFORMED_FUNCTION_CALL, and the loop asks again",
    ],
)
