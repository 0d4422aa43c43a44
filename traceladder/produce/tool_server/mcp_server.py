"""The MCP server proper: `tools/list` from the domain's definitions, `tools/call` through a
case's `CaseTools`. Transport-free: `http_transport` and `stdio_transport` run it.

A bad call never crashes the server and never becomes a protocol error: an unknown tool,
arguments that are not a JSON object (a string of broken JSON, a list), a call after the case
ended — each is a tool result with `isError` and the sandbox's error object, recorded on its
span as the built-in loop records it. The SDK validates `tools/call` params before any handler
and would refuse arguments that are not an object as a protocol error, so `RawArguments` takes
such arguments out of the params first and hands them to the handler as they came.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared._otel import extract_trace_context

from traceladder import __version__
from traceladder.produce.tool_server.cases import CaseTools, ToolResult
from traceladder.suite.domain.base import Domain

log = logging.getLogger(__name__)

CaseResolver = Callable[[ServerRequestContext[Any, Any]], CaseTools | None]


_NOT_AN_OBJECT: ContextVar[tuple[Any] | None] = ContextVar("traceladder_raw_arguments", default=None)


class RawArguments:
    """Server middleware: `tools/call` arguments that are not a JSON object (a string of broken
    JSON, a list) leave the params before the SDK validates them, and reach the handler through a
    context variable, so the sandbox answers them as it answers the model's."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if ctx.method != "tools/call" or not isinstance(params, Mapping):
            return await call_next(ctx)
        arguments = params.get("arguments")
        if arguments is None or isinstance(arguments, dict):
            return await call_next(ctx)
        token = _NOT_AN_OBJECT.set((arguments,))
        try:
            return await call_next(replace(ctx, params={k: v for k, v in params.items() if k != "arguments"}))
        finally:
            _NOT_AN_OBJECT.reset(token)


def build_server(domain: Domain, resolve: CaseResolver) -> Server[Any]:
    """An MCP server offering `domain`'s tools; `resolve(ctx)` names the calling case's tools
    (None: no such case, a tool error)."""
    tools = [mcp_tool(t) for t in domain.tools]

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            case = resolve(ctx)
            if case is None:
                result = ToolResult(_error("unknown_case", "no such case, or it has ended"), True)
            else:
                raw = _NOT_AN_OBJECT.get()
                arguments = raw[0] if raw is not None else params.arguments or {}
                result = case.call(params.name, arguments, extract_trace_context(ctx.meta))
        except Exception as exc:  # a bug of ours costs this call, never the server
            log.exception("tools/call %s failed", params.name)
            result = ToolResult(_error("internal_error", f"{type(exc).__name__}: {exc}"), True)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)], is_error=result.is_error
        )

    server: Server[Any] = Server(
        f"traceladder-{domain.name}",
        version=__version__,
        instructions=domain.system_prompt or None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # Replacing the SDK's OpenTelemetry middleware: it would record a second `execute_tool` span
    # per call in whatever global provider the process has (inside a run: the run's). One
    # execution, one span — ours, from the loop's code.
    server.middleware = [RawArguments()]
    return server


def mcp_tool(definition: Mapping[str, Any]) -> types.Tool:
    """An OpenAI-format tool definition as an MCP tool. The schema is passed on as data (never
    resolved or compiled here); one that is not a JSON object is offered as an open object, and
    the sandbox judges the arguments against the domain's own validators."""
    function = definition.get("function") or {}
    parameters = function.get("parameters")
    schema = parameters if isinstance(parameters, dict) else {"type": "object"}
    if schema.get("type") != "object":
        schema = {**schema, "type": "object"}
    return types.Tool(
        name=str(function.get("name", "")),
        description=function.get("description") or None,
        input_schema=schema,
    )


def _error(error_type: str, message: str) -> str:
    return json.dumps({"error": {"type": error_type, "message": message}}, ensure_ascii=False)
