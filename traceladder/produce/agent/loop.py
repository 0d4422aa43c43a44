"""The agent loop for one case: model ⇄ sandbox until a text answer, every step a GenAI span.

Span tree (DESIGN §3): `invoke_agent {agent}` ▸ `chat {model}` per request ▸ `execute_tool {tool}`
per executed call. Nothing here raises into the batch: an exhausted retry, an unusable response,
the case deadline, MAX_STEPS, a stop of the run and any unexpected exception all end the case
with an error type recorded on its invoke_agent span — so every outcome has a trace to join.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from traceladder.instrumentation import semconv as sc
from traceladder.produce.agent.budget import Budget, CaseStopped, DeadlineExceeded
from traceladder.produce.agent.completion import Completion, InvalidResponse, parse_completion
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.messages import (
    ToolCallRequest,
    assistant_message,
    dumps,
    normalize_tool_calls,
    otel_messages,
    otel_output,
    otel_tool_definitions,
    response_quirks,
)
from traceladder.produce.agent.retry import ModelCallError, call_with_retry
from traceladder.produce.agent.tool_execution import execute_tool_call
from traceladder.produce.agent.tool_execution import timed_span as _span
from traceladder.produce.agent.turns import conversation_id, play_goal, play_turns
from traceladder.produce.agent.user_sim import USER_MODEL_ERROR, GoalConversation, UserModel, UserModelError
from traceladder.suite.cases.model import Case
from traceladder.suite.domain.base import Domain, Sandbox

AGENT_NAME = "traceladder-agent"
INTERRUPTED = "interrupted"  # error type of a case abandoned because the run was stopped


@dataclass(frozen=True)
class Endpoint:
    """Who we talk to, as recorded on spans (never the key)."""

    provider: str
    host: str
    port: int | None


@dataclass(frozen=True)
class AgentOutcome:
    trace_id: str
    status: str  # ok | error
    error_type: str | None
    error_message: str | None
    steps: int
    final_text: str | None
    input_tokens: int
    output_tokens: int
    latency_ms: float
    # The request error type when the case ended because the endpoint failed (`http_401`,
    # `connection`, `response_not_json`): what the runner's breaker counts. None otherwise.
    endpoint_error: str | None = None
    # A multi-turn case's turns, each its own trace, in the order played (`produce.agent.turns`); empty
    # for a single-turn case. The fields above then describe the conversation (`turns.combine`).
    turns: tuple[AgentOutcome, ...] = ()

    @property
    def interrupted(self) -> bool:
        return self.error_type == INTERRUPTED or any(t.interrupted for t in self.turns)


@dataclass
class _Totals:
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class AgentError(Exception):
    """Ends a case as AGENT_ERROR. `request_error_type` is the finer cause recorded on the chat
    span (`http_503`, `read_timeout`) when it differs from the case-level type; `endpoint` says the
    endpoint failed (not the model's behaviour, not the case's deadline)."""

    def __init__(
        self, error_type: str, message: str, request_error_type: str | None = None, *, endpoint: bool = False
    ) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.request_error_type = request_error_type or error_type
        self.endpoint = endpoint


# Answers that show the server is not speaking chat completions at all (a web page, an empty
# body), as opposed to a model's output cut off by the token cap.
_NOT_AN_API = frozenset({"response_empty", "response_not_utf8", "response_not_json", "response_no_choices"})


class TokenCap:
    """The output-token cap and the request field that carries it, shared by a run's cases.

    `auto` sends `max_completion_tokens` to api.openai.com (newer OpenAI models refuse
    `max_tokens`) and `max_tokens` elsewhere (llama.cpp, older vLLM and Ollama know only that);
    a 400 that names the field sent switches to the other one, once, for the rest of the run.
    """

    def __init__(self, max_tokens: int, param: str, host: str) -> None:
        if param == "auto":
            param = "max_completion_tokens" if host == "api.openai.com" else "max_tokens"
        self.max_tokens = max_tokens
        self.param = param
        self._switched = False
        self._lock = threading.Lock()

    def params(self) -> dict[str, int]:
        return {self.param: self.max_tokens}

    def switch_if_rejected(self, exc: openai.BadRequestError) -> bool:
        """True when the server refused the field we sent and we switched to the other one."""
        with self._lock:
            if self._switched or self.param not in str(exc.message):
                return False
            self.param = "max_tokens" if self.param == "max_completion_tokens" else "max_completion_tokens"
            self._switched = True
            return True


ClientFactory = Callable[[], openai.OpenAI]


def run_case(
    case: Case,
    *,
    domain: Domain,
    sandbox: Sandbox,
    client_factory: ClientFactory,
    config: AgentConfig,
    endpoint: Endpoint,
    tracer: Tracer,
    run_id: str,
    repeat_index: int = 0,
    stop: threading.Event | None = None,
    token_cap: TokenCap | None = None,
    clock: Callable[[], int] = time.time_ns,
    user_model: UserModel | None = None,
) -> AgentOutcome:
    """Run one case to its end and return what happened (the spans carry the details).

    The case gets its own HTTP client, so a request abandoned at the deadline can be cut off by
    closing it without touching other cases. `stop` set by the runner abandons the case
    (`AgentOutcome.interrupted`): it is not recorded, and `--resume` runs it again.

    A multi-turn case plays its turns in order (`produce.agent.turns`), each turn its own trace (an
    `invoke_agent` root tagged `traceladder.case.turn`), one messages list carried through them
    all — the user's next message follows the agent's answer, as in a chat — in one sandbox, so
    turn 2 acts on what turn 1 did. Each turn has the case timeout and MAX_STEPS of its own and
    is offered its turn's `tools` (default: all of the domain's). A goal case's messages come
    from `user_model` playing the user (`produce.agent.user_sim`), turn after turn until it is done.
    """
    cap = token_cap or TokenCap(config.max_tokens, config.token_param, endpoint.host)
    conversation = conversation_id(run_id, case, repeat_index)
    messages: list[dict[str, Any]] = [{"role": "system", "content": domain.system_prompt}]

    def play(
        turn: int | None,
        user: str | None,
        tools: tuple[str, ...] | None,
        goal: GoalConversation | None = None,
    ) -> AgentOutcome:
        if user is not None:
            messages.append({"role": "user", "content": user})
        offered = (
            domain.tools
            if tools is None
            else tuple(t for t in domain.tools if t["function"]["name"] in tools)
        )
        return _run_turn(
            case, turn, messages, offered, domain=domain, sandbox=sandbox, client_factory=client_factory,
            config=config, endpoint=endpoint, tracer=tracer, run_id=run_id, repeat_index=repeat_index,
            stop=stop, cap=cap, clock=clock, conversation=conversation, goal=goal,
        )  # fmt: skip

    if case.goal is not None:
        if user_model is None:
            raise ValueError(f"case {case.id} gives a user goal: it needs a user model")
        talk = GoalConversation(case.goal, user_model, tracer, conversation, clock)
        return play_goal(
            case.goal.max_turns, lambda index: play(index, None, None, talk), lambda: talk.ended is not None
        )
    if case.multi_turn:
        return play_turns(case, lambda index, turn: play(index, turn.user, turn.tools))
    return play(None, case.instruction, None)


def _run_turn(
    case: Case,
    turn: int | None,
    messages: list[dict[str, Any]],
    tools: Sequence[dict[str, Any]],
    *,
    domain: Domain,
    sandbox: Sandbox,
    client_factory: ClientFactory,
    config: AgentConfig,
    endpoint: Endpoint,
    tracer: Tracer,
    run_id: str,
    repeat_index: int,
    stop: threading.Event | None,
    cap: TokenCap,
    clock: Callable[[], int],
    conversation: str,
    goal: GoalConversation | None = None,
) -> AgentOutcome:
    """One trace: the user's latest message in `messages` answered to the end (the messages the
    turn adds are appended to `messages`, the history the next turn carries). With `goal`, the
    simulated user's message is asked for inside the trace first, and its reaction after."""
    started = time.monotonic()
    budget = Budget(started + config.case_timeout_s, stop or threading.Event())
    totals = _Totals()
    attrs: dict[str, Any] = {
        sc.OPERATION_NAME: sc.OP_INVOKE_AGENT,
        sc.PROVIDER_NAME: endpoint.provider,
        sc.AGENT_NAME: AGENT_NAME,
        sc.CONVERSATION_ID: conversation,
        sc.REQUEST_MODEL: config.model,
        sc.RUN_ID: run_id,
        sc.DOMAIN: domain.name,
        sc.CASE_ID: case.id,
        sc.CASE_DIMENSION: case.dimension,
        sc.CASE_REPEAT: repeat_index,
    }
    if turn is not None:
        attrs[sc.CASE_TURN] = turn
    with _span(tracer, f"invoke_agent {AGENT_NAME}", SpanKind.INTERNAL, attrs, clock) as agent:
        trace_id = format(agent.get_span_context().trace_id, "032x")
        status, error_type, error_message, final_text = "ok", None, None, None
        endpoint_error: str | None = None
        client: openai.OpenAI | None = None
        try:
            client = client_factory()
            session = _Session(
                domain, sandbox, client, config, endpoint, tracer, conversation, clock, budget, cap,
                tuple(tools),
            )  # fmt: skip
            if goal is not None:
                messages.append({"role": "user", "content": goal.message()})
            final_text = _converse(messages, session, totals)
            if goal is not None:
                goal.answered(turn or 0, final_text, agent)
        except UserModelError as exc:
            error_type, error_message = USER_MODEL_ERROR, str(exc)
        except AgentError as exc:
            error_type, error_message = exc.error_type, str(exc)
            endpoint_error = exc.request_error_type if exc.endpoint else None
        except CaseStopped:
            error_type, error_message = INTERRUPTED, "the run was stopped before this case finished"
        except Exception as exc:  # a bug must cost one case, recorded on its own trace, never the batch
            error_type, error_message = "internal_error", f"{type(exc).__name__}: {exc}"
        finally:
            if client is not None:
                client.close()
        if error_type is not None:
            status = "error"
            agent.set_status(Status(StatusCode.ERROR, error_message))
            agent.set_attribute(sc.ERROR_TYPE, error_type)
        agent.set_attribute(sc.AGENT_STATUS, status)
        agent.set_attribute(sc.AGENT_STEPS, totals.steps)
        agent.set_attribute(sc.SANDBOX_LEDGER, ledger_json(sandbox))
        agent.set_attribute(sc.USAGE_INPUT_TOKENS, totals.input_tokens)
        agent.set_attribute(sc.USAGE_OUTPUT_TOKENS, totals.output_tokens)
    return AgentOutcome(
        trace_id, status, error_type, error_message, totals.steps, final_text,
        totals.input_tokens, totals.output_tokens, (time.monotonic() - started) * 1000, endpoint_error,
    )  # fmt: skip


def ledger_json(sandbox: Sandbox) -> str:
    """The sandbox's end state as span-attribute text (a dry-run ledger is small: one entry per
    requested action)."""
    entries = [
        {"action_id": e.action_id, "tool": e.tool, "arguments": e.arguments, "status": e.status}
        for e in sandbox.ledger()
    ]
    return json.dumps(entries, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class _Session:
    """What one case's conversation needs, passed as one value."""

    domain: Domain
    sandbox: Sandbox
    client: openai.OpenAI
    config: AgentConfig
    endpoint: Endpoint
    tracer: Tracer
    conversation: str
    clock: Callable[[], int]
    budget: Budget
    cap: TokenCap
    tools: tuple[dict[str, Any], ...]  # the tools offered in this turn


def _converse(messages: list[dict[str, Any]], s: _Session, totals: _Totals) -> str:
    """Answer the conversation in `messages` (system prompt, user message(s), earlier turns) to a
    text answer, appending every message the answer adds."""
    definitions = dumps(otel_tool_definitions(s.tools))
    descriptions = {t["function"]["name"]: t["function"].get("description", "") for t in s.tools}
    # Call ids already in the history (earlier turns) are taken: `normalize_tool_calls` renames a
    # repeat, so one id never names two calls of one conversation.
    seen_ids: set[str] = {
        str(c.get("id")) for m in messages for c in (m.get("tool_calls") or []) if c.get("id") is not None
    }
    for step in range(1, s.config.max_steps + 1):
        if s.budget.remaining() <= 0:
            raise AgentError(
                "timeout", f"case timeout of {s.config.case_timeout_s}s reached before step {step}"
            )
        totals.steps = step
        chat_attrs: dict[str, Any] = {
            sc.OPERATION_NAME: sc.OP_CHAT,
            sc.PROVIDER_NAME: s.endpoint.provider,
            sc.REQUEST_MODEL: s.config.model,
            sc.SERVER_ADDRESS: s.endpoint.host,
            sc.CONVERSATION_ID: s.conversation,
        }
        if s.endpoint.port is not None:
            chat_attrs[sc.SERVER_PORT] = s.endpoint.port
        with _span(s.tracer, f"chat {s.config.model}", SpanKind.CLIENT, chat_attrs, s.clock) as chat:
            chat.set_attribute(sc.REQUEST_TEMPERATURE, s.config.temperature)
            chat.set_attribute(sc.REQUEST_MAX_TOKENS, s.config.max_tokens)
            chat.set_attribute(sc.INPUT_MESSAGES, dumps(otel_messages(messages)))
            chat.set_attribute(sc.TOOL_DEFINITIONS, definitions)
            notes = _RequestNotes()
            try:
                completion = _request(s, messages, notes)
            except AgentError as exc:
                chat.set_status(Status(StatusCode.ERROR, str(exc)))
                chat.set_attribute(sc.ERROR_TYPE, exc.request_error_type)
                notes.record(chat)
                raise
            calls = normalize_tool_calls(completion.tool_calls, step, seen_ids)
            notes.quirks += response_quirks(
                completion.tool_calls, calls, completion.finish_reason, completion.content
            )
            notes.record(chat)
            _record_response(chat, completion, calls, totals)
        messages.append(assistant_message(completion.content, calls))
        if not calls:  # whatever the finish_reason says, no calls means the answer is final
            return completion.content or ""
        for call in calls:
            messages.append(
                execute_tool_call(call, s.sandbox, s.tracer, s.conversation, descriptions, s.clock)
            )
    raise AgentError("max_steps", f"MAX_STEPS={s.config.max_steps} reached without a final answer")


@dataclass
class _RequestNotes:
    """What one model request went through that did not end it: the error types of the attempts
    that were retried, and the server quirks tolerated. Recorded on its chat span only when
    something happened, so an ordinary span stays exactly as it was."""

    retries: list[str] = field(default_factory=list)
    quirks: list[str] = field(default_factory=list)

    def record(self, chat: Span) -> None:
        if self.retries:
            chat.set_attribute(sc.REQUEST_RETRIES, self.retries)
        if self.quirks:
            chat.set_attribute(sc.RESPONSE_QUIRKS, self.quirks)


def _request(s: _Session, messages: list[dict[str, Any]], notes: _RequestNotes) -> Completion:
    """One chat completion, retried by the run's policy, bounded by the case budget, validated.
    Every failure is an `AgentError` whose type says which; `CaseStopped` passes through. What
    was retried or tolerated on the way goes into `notes`."""
    timeout_s = s.config.request_timeout_s

    def send() -> Any:
        return s.client.chat.completions.with_raw_response.create(
            model=s.config.model, messages=messages, tools=list(s.tools),  # type: ignore[arg-type]
            temperature=s.config.temperature, timeout=max(0.1, min(timeout_s, s.budget.remaining())),
            extra_body=s.cap.params(),
        )  # fmt: skip

    def attempt() -> Completion:
        def once() -> Any:
            try:
                return send()
            except openai.BadRequestError as exc:
                if not s.cap.switch_if_rejected(exc):
                    raise
                notes.quirks.append("token_param_refused")
                return send()

        raw = s.budget.run(once, abandon=s.client.close)
        http = raw.http_response
        return parse_completion(http.content, http.headers.get("content-type"))

    try:
        completion, _ = call_with_retry(
            attempt, s.config.retry, s.budget, on_retry=lambda _, error_type: notes.retries.append(error_type)
        )
    except ModelCallError as exc:
        kind = "timeout" if exc.error_type in ("timeout", "read_timeout") else "api_error"
        raise AgentError(kind, str(exc), exc.error_type, endpoint=True) from None
    except InvalidResponse as exc:
        raise AgentError(exc.error_type, str(exc), endpoint=exc.error_type in _NOT_AN_API) from None
    except DeadlineExceeded:
        raise AgentError(
            "timeout", f"case timeout of {s.config.case_timeout_s}s reached during a model request"
        ) from None
    return completion


def _record_response(chat: Span, c: Completion, calls: list[ToolCallRequest], totals: _Totals) -> None:
    totals.input_tokens += c.input_tokens
    totals.output_tokens += c.output_tokens
    chat.set_attribute(sc.RESPONSE_MODEL, c.model)
    chat.set_attribute(sc.RESPONSE_ID, c.response_id)
    chat.set_attribute(sc.RESPONSE_FINISH_REASONS, [c.finish_reason or ""])
    chat.set_attribute(sc.USAGE_INPUT_TOKENS, c.input_tokens)
    chat.set_attribute(sc.USAGE_OUTPUT_TOKENS, c.output_tokens)
    chat.set_attribute(sc.OUTPUT_MESSAGES, dumps(otel_output(c.content, calls, c.finish_reason)))
