"""The names a convention plug-in uses: subclass `Convention` and override the hooks your
producer's spans answer (docs/extending.md, docs/conventions.md). Registered in the
`traceladder.conventions` entry-point group; read where `[plugins] conventions` or
`reindex --conventions` names it, and recorded in the store."""

from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_EVENT,
    ARGS_PART_STRING,
    ARGS_STRUCTURED,
    ARGS_TOOL_SPAN,
    args_rank_of,
    args_text,
    as_dict,
    as_list,
    loads,
    name_text,
    text,
)
from traceladder.extract.conventions.base import LLM, TOOL, Convention, Messages, Role, Side
from traceladder.extract.conventions.sightings import (
    DefinitionList,
    DefinitionSource,
    Execution,
    History,
    Sighting,
    sighting,
    tool_definitions,
)
from traceladder.extract.conventions.views import SpanView

__all__ = [
    "ABSENT",
    "ARGS_EVENT",
    "ARGS_PART_STRING",
    "ARGS_STRUCTURED",
    "ARGS_TOOL_SPAN",
    "LLM",
    "TOOL",
    "Convention",
    "DefinitionList",
    "DefinitionSource",
    "Execution",
    "History",
    "Messages",
    "Role",
    "Side",
    "Sighting",
    "SpanView",
    "args_rank_of",
    "args_text",
    "as_dict",
    "as_list",
    "loads",
    "name_text",
    "sighting",
    "text",
    "tool_definitions",
]
