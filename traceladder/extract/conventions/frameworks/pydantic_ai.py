"""Pydantic AI's native OTel GenAI instrumentation (scope `pydantic-ai`; docs/conventions.md,
"pydantic-ai").

Everything is OTel GenAI (`gen_ai.input/output.messages` with the model's argument text, tool
definitions on every chat span), except one envelope: an `execute_tool` span whose arguments did
not parse records `gen_ai.tool.call.arguments` as `{"INVALID_JSON": "<the model's text>"}`. The
model's response outranks it anyway (decision 88); this module unwraps it so that a trace whose
chat spans were dropped (sampling, a lost batch) still carries the text the model sent, never
the wrapper as if it were the arguments.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from traceladder.extract.conventions.attribute_values import ARGS_TOOL_SPAN, as_dict
from traceladder.extract.conventions.base import Convention
from traceladder.extract.conventions.sightings import Execution
from traceladder.extract.conventions.views import SpanView

SCOPE: Final = "pydantic-ai"
NAME: Final = "pydantic_ai"
WRAPPER: Final = "INVALID_JSON"


class PydanticAI(Convention):
    name = NAME
    precedence = 5
    scopes = frozenset({SCOPE})

    def refine_execution(self, span: SpanView, execution: Execution) -> Execution:
        if span.scope_name != SCOPE or not isinstance(execution.args, str) or WRAPPER not in execution.args:
            return execution
        wrapped = as_dict(execution.args)
        if wrapped is None or set(wrapped) != {WRAPPER} or not isinstance(wrapped[WRAPPER], str):
            return execution
        return replace(execution, args=wrapped[WRAPPER], args_rank=ARGS_TOOL_SPAN, _canon=None)


CONVENTION = PydanticAI()
