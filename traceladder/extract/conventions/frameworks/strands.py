"""Strands Agents (`strands.telemetry.tracer`), default conventions and
`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental,gen_ai_tool_definitions`
(docs/conventions.md, "Strands Agents").

Messages are Bedrock content blocks (read by `otel_genai.block_calls`); what is Strands' own:
* its `execute_tool` spans keep the arguments and the result in span events, not attributes: a
  `gen_ai.tool.message` event whose `content` is the arguments (JSON of the parsed input) and a
  `gen_ai.choice` event whose `message` is the result as text blocks — unless the
  `gen_ai.tool.call.arguments/result` attributes of the latest conventions are there;
* the tool span describes its tool with `gen_ai.tool.description` and the parameters schema in
  `gen_ai.tool.json_schema` (default conventions record no tool list a request sent).
Strands parses the model's arguments before recording anything: an invalid JSON string becomes
`{}` everywhere, so the model's text is lost (docs/conventions.md says so).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from traceladder.extract.conventions import otel_genai as og
from traceladder.extract.conventions.attribute_values import ABSENT, ARGS_STRUCTURED, as_dict, loads, text
from traceladder.extract.conventions.base import Convention
from traceladder.extract.conventions.sightings import DefinitionSource, Execution
from traceladder.extract.conventions.views import SpanView
from traceladder.instrumentation import semconv as sc

SCOPE: Final = "strands.telemetry.tracer"
NAME: Final = "strands"


def _event(span: SpanView, name: str) -> dict[str, Any] | None:
    for event in span.events or ():
        if (
            isinstance(event, dict)
            and event.get("name") == name
            and isinstance(event.get("attributes"), dict)
        ):
            return event["attributes"]
    return None


class Strands(Convention):
    name = NAME
    precedence = 5
    scopes = frozenset({SCOPE})

    def refine_execution(self, span: SpanView, execution: Execution) -> Execution:
        if span.scope_name != SCOPE:
            return execution
        args, result = execution.args, execution.result
        if args is ABSENT:
            asked = _event(span, og.TOOL_MESSAGE)
            if asked is not None and "content" in asked:
                args = loads(asked["content"], asked["content"])
        answered = _event(span, og.CHOICE)
        if answered is not None and "message" in answered:
            result = og.blocks_text(answered["message"])
        elif result is not None:
            result = og.blocks_text(loads(result, result))  # latest conventions: a block list
        if (args, result) == (execution.args, execution.result):
            return execution
        return replace(execution, args=args, args_rank=ARGS_STRUCTURED, result=result, _canon=None)

    def tool_definition(self, span: SpanView) -> DefinitionSource | None:
        attrs = span.attributes
        if span.scope_name != SCOPE or not isinstance(attrs.get(og.TOOL_NAME), str):
            return None
        schema = as_dict(attrs.get("gen_ai.tool.json_schema"))
        description = attrs.get(sc.TOOL_DESCRIPTION)
        return DefinitionSource(
            attrs[og.TOOL_NAME], text(description) if isinstance(description, str) else None, schema, NAME
        )


CONVENTION = Strands()
