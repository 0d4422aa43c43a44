"""Gemini's tool schemas as JSON Schema, for every reader of them (the Google ADK convention,
`--tools` files).

Gemini's `FunctionDeclaration.parameters` is an OpenAPI subset: type names spelled `OBJECT`,
`STRING`, … (the SDK and the REST API both send them upper-case) and `nullable: true` instead of a
null type. Everything else it allows (properties, items, required, enum, anyOf, …) is JSON Schema
already. A declaration's `parametersJsonSchema` is JSON Schema as it is.
"""

from __future__ import annotations

from typing import Any


def json_schema(schema: Any) -> Any:
    """Gemini's schema as JSON Schema: type names lower-cased, `nullable: true` as a type that also
    admits null, recursively (a property *named* `nullable` or `type` is a property, kept)."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: json_schema(v) for k, v in schema.items() if k not in ("nullable", "properties")}
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {name: json_schema(p) for name, p in schema["properties"].items()}
    elif "properties" in schema:
        out["properties"] = schema["properties"]
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = kind.lower()
        if schema.get("nullable") is True:
            out["type"] = [kind.lower(), "null"]
    return out
