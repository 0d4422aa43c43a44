"""A process agent for `traceladder run --agent-cmd "python examples/agents/command_agent.py"`.

Any language works the same way: read the case as JSON on stdin, talk to the model the
environment names (OPENAI_BASE_URL / OPENAI_MODEL / OPENAI_API_KEY), execute tools by POSTing
`{"name", "arguments"}` to TRACELADDER_TOOLS_URL, print the answer. Its OpenTelemetry SDK reads
OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_RESOURCE_ATTRIBUTES, so its `chat` spans reach the run and
are attributed to the case, though the SDK starts a trace of its own.
"""

import json
import os
import sys
import urllib.request

import openai
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

# Resource.create adds what OTEL_RESOURCE_ATTRIBUTES says: the run and the case
provider = TracerProvider(resource=Resource.create({"service.name": "python-command-agent"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
tracer = provider.get_tracer("command-agent")


def call_tool(name, arguments):
    body = json.dumps({"name": name, "arguments": arguments}).encode()
    request = urllib.request.Request(
        os.environ["TRACELADDER_TOOLS_URL"], body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)["content"]


def main():
    case = json.load(sys.stdin)
    client = openai.OpenAI(max_retries=1)  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment
    model = os.environ["OPENAI_MODEL"]
    messages = [{"role": "system", "content": case["system_prompt"]}, *case["messages"]]
    for _ in range(8):
        with tracer.start_as_current_span(f"chat {model}") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.request.model", model)
            reply = client.chat.completions.create(model=model, messages=messages, tools=case["tools"])
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            print(message.content or "")
            break
        for call in message.tool_calls:
            content = call_tool(call.function.name, call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    provider.shutdown()  # flush: the spans are in the run before the process exits


if __name__ == "__main__":
    main()
