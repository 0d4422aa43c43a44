"""The OpenTelemetry GenAI attribute names we emit and read, pinned to one conventions version.

We define our own constants rather than importing `opentelemetry.semconv._incubating`: since 0.65b0
every gen_ai name there is marked deprecated ("moved to semantic-conventions-genai"), and enum
calls warn, which breaks code run under `-W error`.
"""

from typing import Final

# semantic-conventions v1.41.1 (the last in-repo GenAI release); the execute_tool span and the
# tool-call attributes are unchanged in semantic-conventions-genai as of 2026-08.
CONVENTIONS_VERSION: Final = "otel-genai/1.41.1"

OPERATION_NAME: Final = "gen_ai.operation.name"
PROVIDER_NAME: Final = "gen_ai.provider.name"
SYSTEM_LEGACY: Final = "gen_ai.system"  # <= 1.36; read from foreign traces only
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_ID: Final = "gen_ai.agent.id"
CONVERSATION_ID: Final = "gen_ai.conversation.id"
REQUEST_MODEL: Final = "gen_ai.request.model"
REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
REQUEST_SEED: Final = "gen_ai.request.seed"
RESPONSE_MODEL: Final = "gen_ai.response.model"
RESPONSE_ID: Final = "gen_ai.response.id"
RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
TOOL_ERROR_GENAI: Final = "gen_ai.tool.error"  # not in the conventions; some producers write it
ERROR_TYPE: Final = "error.type"
EXCEPTION_TYPE: Final = "exception.type"  # on the `exception` span event
EVENT_NAME: Final = "event.name"  # a log record's event name before the field existed
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"

OP_CHAT: Final = "chat"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_INVOKE_AGENT: Final = "invoke_agent"

# Event names (log records or span events) of the event form of the conventions.
EVENT_USER_MESSAGE: Final = "gen_ai.user.message"
EVENT_SYSTEM_MESSAGE: Final = "gen_ai.system.message"
SYSTEM_INSTRUCTIONS: Final = (
    "gen_ai.system_instructions"  # a request's system prompt (1.37+: a list of parts)
)
EVENT_CHOICE: Final = "gen_ai.choice"
EVENT_ASSISTANT_MESSAGE: Final = "gen_ai.assistant.message"
EVENT_TOOL_MESSAGE: Final = "gen_ai.tool.message"
EVENT_OPERATION_DETAILS: Final = "gen_ai.client.inference.operation.details"

# Our own namespace (not part of the conventions).
RUN_ID: Final = "traceladder.run.id"
DOMAIN: Final = "traceladder.domain"
CASE_ID: Final = "traceladder.case.id"
CASE_DIMENSION: Final = "traceladder.case.dimension"
CASE_REPEAT: Final = "traceladder.case.repeat"
# The 0-based turn of a multi-turn case a trace played (absent on a single-turn case's trace).
CASE_TURN: Final = "traceladder.case.turn"
# Who a span speaks for when it is not the agent: `simulated_user` marks the spans of the user a
# goal case's simulated user plays (`produce.agent.user_sim`). Extraction never reads a marked span as the
# agent's (no tool calls, no model turn, no history), whatever it records.
ROLE: Final = "traceladder.role"
ROLE_SIMULATED_USER: Final = "simulated_user"
# On the root of the turn whose answer ended a goal case's conversation: why it ended (`stop`: the
# simulated user said it was done; `max_turns`: the goal's turn budget was spent).
USER_ENDED: Final = "traceladder.user.ended"
# The `error.type` of a turn the simulated user failed in (judged NOT_EVALUATED, never the agent's).
USER_MODEL_ERROR: Final = "user_model_error"
AGENT_STATUS: Final = "traceladder.agent.status"
AGENT_STEPS: Final = "traceladder.agent.steps"
# The sandbox's action ledger when the case ended (JSON list of {action_id, tool, arguments, status}):
# the end state the state rung compares with the golden path's.
SANDBOX_LEDGER: Final = "traceladder.sandbox.ledger"
TOOL_ERROR: Final = "traceladder.tool.error"
CONVENTIONS: Final = "traceladder.conventions"
# On a `chat` span, only when something happened (an ordinary request carries neither):
# the error type of every failed attempt the retry policy retried, in order (`http_429`, …) …
REQUEST_RETRIES: Final = "traceladder.request.retries"
# … and every deviation of the server's response the agent tolerated, one entry per occurrence.
RESPONSE_QUIRKS: Final = "traceladder.response.quirks"
# On the judge's own `chat` spans: what it judged and how (traceladder.evaluate.judge.phase).
JUDGE_PROMPT_HASH: Final = "traceladder.judge.prompt_hash"
JUDGE_TRAJECTORY_HASH: Final = "traceladder.judge.trajectory_hash"
JUDGE_JUDGED_TRACE_ID: Final = "traceladder.judge.judged_trace_id"
JUDGE_RUBRIC_VERSION: Final = "traceladder.judge.rubric_version"
JUDGE_VERDICT: Final = "traceladder.judge.verdict"
JUDGE_LINK: Final = "traceladder.judge.link"  # on the link to the judged trace

# The values of RESPONSE_QUIRKS, each with what was tolerated and what the agent did about it.
QUIRKS: Final[dict[str, str]] = {
    "arguments_object": "tool-call arguments arrived as a JSON object, not a JSON string; serialised once",
    "call_id_missing": "a tool call had no id; one was generated",
    "call_id_repeated": "a tool-call id repeated an earlier one; it was made unique",
    "finish_reason_not_tool_calls": "finish_reason was not tool_calls although the response had tool calls; "
    "the calls were executed",
    "content_null": "the final answer had content: null; read as an empty answer",
    "token_param_refused": "the server refused the output-token field; the other one "
    "(max_tokens / max_completion_tokens) is used for the rest of the run",
}
