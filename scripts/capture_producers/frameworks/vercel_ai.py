"""The Vercel AI SDK (`ai`, TypeScript/JavaScript): `generateText` / `streamText` with three tools and
`stopWhen: stepCountIs(8)` on the `@ai-sdk/openai` provider's chat-completions model, pointed at the
scripted server, traced by the SDK's own telemetry (`experimental_telemetry: {isEnabled: true,
functionId: "travel-agent"}`) through `@opentelemetry/sdk-node` and the OTLP/HTTP exporters. The agent
is `frameworks/node/vercel-ai/agent.mjs`, run by node_runner.py. The SDK runs the tool loop itself:
a call whose input does not parse or fails its zod schema is not executed and goes back to the model
as an error result.
"""

from __future__ import annotations

from typing import Any

from frameworks import FrameworkConfig, FrameworkRun
from frameworks.node_runner import npm_versions, run_node

NPM = ["ai", "@ai-sdk/openai", "@opentelemetry/sdk-node", "@opentelemetry/exporter-trace-otlp-proto",
       "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/api", "zod"]  # fmt: skip


def _run(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    return run_node("vercel-ai", pipeline, base_url, user_text, streaming)


CONFIG = FrameworkConfig(
    name="vercel-ai",
    framework="vercel-ai-sdk",
    description="Vercel AI SDK generateText/streamText (@ai-sdk/openai chat model, stopWhen stepCountIs(8)) "
    "with experimental_telemetry, exported by @opentelemetry/sdk-node (Node)",
    env={},
    packages=[],
    run=_run,
    versions=lambda: npm_versions("vercel-ai", NPM),
    notes=["spans exported by the Node process itself (JS OTLP/HTTP protobuf and JSON exporters)"],
)
