"""LiteLLM's own OpenTelemetry callback (`litellm.integrations.opentelemetry`, scope `litellm`;
docs/conventions.md, "LiteLLM").

Its `litellm_request` span (`gen_ai.operation.name=chat`) writes `gen_ai.output.messages` with an
**empty** `parts` list for a tool-call turn; the calls are only in the flat
`gen_ai.completion.{j}.function_call.{name, arguments}` (`j` counts calls, the model's argument
text, no id). Its child `raw_gen_ai_request` span keeps the provider's raw response as the
**Python repr** of its `choices` (`llm.<provider>.choices`, e.g. `llm.openai.choices`), which has
the call ids: that span is read as a copy of the same response (nested LLM spans are one response),
its repr with `ast.literal_eval` (literals only: nothing runs), only on this scope, ≤ 1 MB.
"""

from __future__ import annotations

import ast
from typing import Any, Final

from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_EVENT,
    args_rank_of,
    as_dict,
    as_list,
    name_text,
)
from traceladder.extract.conventions.base import LLM, Convention, Role
from traceladder.extract.conventions.otel_genai import openai_calls
from traceladder.extract.conventions.sightings import Sighting, sighting
from traceladder.extract.conventions.views import SpanView

SCOPE: Final = "litellm"
NAME: Final = "litellm"
_COMPLETION = "gen_ai.completion."
_MAX_REPR = 1_000_000
# The raw-request span's key names its provider (LiteLLM's `custom_llm_provider`): these are the
# providers whose raw choices are looked for; another provider's calls still come, without ids,
# from the request span's `gen_ai.completion.*`.
_PROVIDERS = (
    "openai", "azure", "azure_ai", "anthropic", "bedrock", "vertex_ai", "gemini", "mistral", "groq",
    "ollama", "ollama_chat", "together_ai", "deepseek", "xai", "openrouter", "hosted_vllm", "cohere",
    "fireworks_ai", "databricks", "watsonx", "perplexity", "cerebras", "sambanova", "nvidia_nim",
)  # fmt: skip


def _choices_key(attrs: dict[str, Any]) -> str | None:
    """`llm.<provider>.choices`: the raw response's choices, as LiteLLM's raw-request span keeps them."""
    return next(
        (k for k in attrs if k.startswith("llm.") and k.endswith(".choices") and k.count(".") == 2), None
    )


def _literal(text: Any) -> Any:
    if not isinstance(text, str) or len(text) > _MAX_REPR or not text.startswith(("[", "{")):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


def completion_calls(attrs: dict[str, Any]) -> list[Sighting]:
    """`gen_ai.completion.{j}.function_call.{name, arguments}`, j = 0, 1, … until a gap."""
    out = []
    for j in range(10_000):
        name = attrs.get(f"{_COMPLETION}{j}.function_call.name")
        if name is None:
            break
        args = attrs.get(f"{_COMPLETION}{j}.function_call.arguments", ABSENT)
        out.append(sighting(name_text(name), None, args, args_rank_of(args, ARGS_EVENT), NAME, None))
    return out


def raw_choice_calls(attrs: dict[str, Any]) -> list[Sighting]:
    key = _choices_key(attrs)
    out: list[Sighting] = []
    for choice in as_list(_literal(attrs.get(key))) or () if key else ():
        message = as_dict((as_dict(choice) or {}).get("message")) or {}
        out.extend(s._replace(convention=NAME) for s in openai_calls(message.get("tool_calls"), None))
    return out


class LiteLLM(Convention):
    name = NAME
    precedence = 5
    markers = frozenset({f"{_COMPLETION}0.function_call.name", *(f"llm.{p}.choices" for p in _PROVIDERS)})
    scopes = frozenset({SCOPE})

    def role(self, span: SpanView) -> Role | None:
        # the raw-request span has no operation: its raw choices make it a copy of the response
        if span.scope_name == SCOPE and _choices_key(span.attributes) is not None:
            return LLM
        return None

    def response_calls(self, span: SpanView) -> list[Sighting]:
        if span.scope_name != SCOPE:
            return []
        return completion_calls(span.attributes) or raw_choice_calls(span.attributes)


CONVENTION = LiteLLM()
