"""Amazon Bedrock Converse (`toolUse` blocks) on the scripted server's `/model/<id>/converse` and
`/converse-stream` (bedrock_converse.py), with a small agent loop on the real boto3
`bedrock-runtime` client (`endpoint_url` at the server, dummy credentials), traced by
`opentelemetry-instrumentation-botocore` (`BotocoreInstrumentor().instrument(tracer_provider=,
logger_provider=)`, `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`): chat spans, and the
messages as OTel GenAI log records (`gen_ai.{system,user,assistant,tool}.message`, `gen_ai.choice`).

The loop: `converse` (or `converse_stream`, its events joined into the same message) with the three
tools in Converse's `toolConfig` (`toolSpec` with `inputSchema.json`), runs each `toolUse` block with
the fake tools of frameworks/__init__.py, sends every result back as a `toolResult` block in one
user message (`status: "error"` with `ToolArgumentsError: ...` when `input` is not an object), until
a turn has no `toolUse`; all inside one attribute-less span `agent run`, so a run is one trace.
"""

from __future__ import annotations

import json
from typing import Any

from frameworks import SYSTEM_PROMPT, TOOL_FUNCTIONS, FrameworkConfig, FrameworkRun
from frameworks.anthropic_messages import tool_specs

MODEL_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0"


def tool_config() -> dict[str, Any]:
    """The three tools as Converse `toolSpec`s."""
    return {
        "tools": [
            {"toolSpec": {"name": t["name"], "description": t["description"], "inputSchema": {"json": t["input_schema"]}}}
            for t in tool_specs()
        ]
    }


def _execute(use: dict[str, Any]) -> dict[str, Any]:
    functions = {f.__name__: f for f in TOOL_FUNCTIONS}
    try:
        if not isinstance(use["input"], dict):
            raise TypeError(f"ToolArgumentsError: input is not an object: {use['input']!r}")
        text, status = functions[use["name"]](**use["input"]), "success"
    except Exception as exc:  # the model gets the error back, as a toolResult with status error
        text, status = f"Error: {type(exc).__name__}: {exc}", "error"
    return {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": text}], "status": status}}


def _joined(stream: Any) -> dict[str, Any]:
    """The streamed events as the message `converse` would have returned (tool input text kept as
    sent: parsed when it parses, the text otherwise)."""
    blocks: dict[int, dict[str, Any]] = {}
    pieces: dict[int, str] = {}
    for event in stream:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            blocks[start["contentBlockIndex"]] = {"toolUse": dict(start["start"]["toolUse"])}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            index, body = delta["contentBlockIndex"], delta["delta"]
            if "text" in body:
                blocks.setdefault(index, {"text": ""})["text"] += body["text"]
            else:
                pieces[index] = pieces.get(index, "") + body["toolUse"]["input"]
    for index, text in pieces.items():
        try:
            blocks[index]["toolUse"]["input"] = json.loads(text)
        except ValueError:
            blocks[index]["toolUse"]["input"] = text
    return {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}


def _run(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    import boto3
    from botocore.config import Config
    from opentelemetry.instrumentation.botocore import BotocoreInstrumentor

    tp = pipeline.make_tracer_provider()
    lp = pipeline.make_logger_provider()
    BotocoreInstrumentor().instrument(tracer_provider=tp, logger_provider=lp)
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=base_url.removesuffix("/v1"),
        aws_access_key_id="AKIAFIXTURENOTAKEY",
        aws_secret_access_key="fixture-not-a-secret",
        config=Config(retries={"max_attempts": 1, "mode": "standard"}),
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": user_text}]}]
    kwargs = {"modelId": MODEL_ID, "system": [{"text": SYSTEM_PROMPT}], "toolConfig": tool_config(),
              "inferenceConfig": {"maxTokens": 512}}  # fmt: skip
    with tp.get_tracer("capture").start_as_current_span("agent run"):
        for _ in range(8):
            if streaming:
                reply = _joined(client.converse_stream(messages=messages, **kwargs)["stream"])
            else:
                reply = client.converse(messages=messages, **kwargs)["output"]["message"]
            messages.append(reply)
            uses = [b["toolUse"] for b in reply["content"] if "toolUse" in b]
            if not uses:
                return FrameworkRun("".join(b.get("text", "") for b in reply["content"]))
            messages.append({"role": "user", "content": [_execute(u) for u in uses]})
    return FrameworkRun(None, "RuntimeError: no final answer after 8 turns")


CONFIG = FrameworkConfig(
    name="bedrock-botocore",
    framework="bedrock",
    description="Amazon Bedrock Converse (boto3 bedrock-runtime converse / converse_stream) in a hand-written "
    "loop, traced by opentelemetry-instrumentation-botocore",
    env={
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": "/dev/null",
        "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
    },
    packages=["boto3", "botocore", "opentelemetry-instrumentation-botocore", "opentelemetry-api", "opentelemetry-sdk"],
    run=_run,
    notes=[
        "content capture: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (default false: no messages)",
        "boto3 reaches the scripted server through endpoint_url with dummy credentials (requests are SigV4-signed, "
        "the server does not check the signature)",
    ],
)
