"""One case of an agent under test: its root span, its tools, the agent's call, its outcome.

Like the built-in loop (`produce.agent.loop.run_case`), nothing here raises into the run: the agent's
exception, a timeout, a non-zero exit and a bug of ours each end the case as AGENT_ERROR with its
type and message on the root span (`invoke_agent {subject}`), so every outcome has a trace to
join; a stop of the run abandons the case (`interrupted`, not recorded, `--resume` runs it).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from traceladder.instrumentation import semconv as sc
from traceladder.produce.agent.budget import CaseStopped
from traceladder.produce.agent.loop import INTERRUPTED, AgentOutcome, ledger_json
from traceladder.produce.agent.tool_execution import timed_span
from traceladder.produce.agent.turns import conversation_id, play_goal, play_turns
from traceladder.produce.agent.user_sim import USER_MODEL_ERROR, GoalConversation, UserModel, UserModelError
from traceladder.produce.subject.attribution import CaseRoot, CaseTraces
from traceladder.produce.subject.case_input import AgentCase, ModelAccess
from traceladder.produce.subject.command_agent import CommandResult, case_environment, run_command
from traceladder.produce.subject.mcp_tools import McpUrl
from traceladder.produce.subject.python_agent import AgentFailed, AgentFn, call_agent
from traceladder.produce.subject.run_server import RunServer
from traceladder.produce.subject.spec import AgentSpec
from traceladder.produce.subject.toolbox import ToolBox
from traceladder.suite.cases.model import Case, Turn
from traceladder.suite.domain.base import Domain, Sandbox


@dataclass(frozen=True)
class CaseSetting:
    """What every case of one agent run shares."""

    spec: AgentSpec
    domain: Domain
    tracer: Tracer
    traces: CaseTraces
    server: RunServer
    model: ModelAccess
    timeout_s: float
    agent_fn: AgentFn | None  # the loaded callable (python agents)
    mcp_url: McpUrl | None = None  # the run's MCP tool server (None: the `mcp` extra is missing)
    user_model: UserModel | None = None  # plays a goal case's user (`produce.agent.user_sim`)


def run_agent_case(
    s: CaseSetting, case: Case, sandbox: Sandbox, repeat: int, stop: threading.Event
) -> AgentOutcome:
    """Run one case of the agent to its end; see the module docstring for what ends it how.

    A multi-turn case calls the agent once per turn (`produce.agent.turns`), each call its own trace,
    with the conversation so far in `AgentCase.messages`: every earlier turn's user message and
    the agent's answer to it, then this turn's message (docs/agent-under-test.md). The sandbox is
    the case's, shared by its turns."""
    conversation = conversation_id(s.traces.run_id, case, repeat)
    if case.goal is not None:
        return _play_goal(s, case, sandbox, repeat, stop, conversation)
    if not case.multi_turn:
        first = ({"role": "user", "content": case.instruction},)
        return _run_turn(s, case, sandbox, repeat, stop, conversation, None, first)
    history: list[dict[str, str]] = []

    def play(index: int, turn: Turn) -> AgentOutcome:
        history.append({"role": "user", "content": turn.user})
        outcome = _run_turn(s, case, sandbox, repeat, stop, conversation, index, tuple(history), turn.tools)
        history.append({"role": "assistant", "content": outcome.final_text or ""})
        return outcome

    return play_turns(case, play)


def _play_goal(
    s: CaseSetting, case: Case, sandbox: Sandbox, repeat: int, stop: threading.Event, conversation: str
) -> AgentOutcome:
    """A goal case: the simulated user's messages, one agent call per turn with the conversation
    so far, until the user is done or the goal's `max_turns` were played."""
    assert case.goal is not None
    if s.user_model is None:
        raise ValueError(f"case {case.id} gives a user goal: it needs a user model")
    talk = GoalConversation(case.goal, s.user_model, s.tracer, conversation, time.time_ns)
    history: list[dict[str, str]] = []

    def play(index: int) -> AgentOutcome:
        outcome = _run_turn(s, case, sandbox, repeat, stop, conversation, index, (), goal=(talk, history))
        history.append({"role": "assistant", "content": outcome.final_text or ""})
        return outcome

    return play_goal(case.goal.max_turns, play, lambda: talk.ended is not None)


def _run_turn(
    s: CaseSetting,
    case: Case,
    sandbox: Sandbox,
    repeat: int,
    stop: threading.Event,
    conversation: str,
    turn: int | None,
    messages: tuple[dict[str, str], ...],
    offered: tuple[str, ...] | None = None,
    goal: tuple[GoalConversation, list[dict[str, str]]] | None = None,
) -> AgentOutcome:
    """One call of the agent, one trace: `messages` answered (a single-turn case: its one). With
    `goal` (the conversation and its history so far), the simulated user's message is asked for
    inside the trace first — the agent gets the history and it — and its reaction after."""
    started = time.monotonic()
    run_id = s.traces.run_id
    attrs: dict[str, Any] = {
        sc.OPERATION_NAME: sc.OP_INVOKE_AGENT,
        sc.PROVIDER_NAME: "traceladder.subject",
        sc.AGENT_NAME: s.spec.subject,
        sc.CONVERSATION_ID: conversation,
        sc.REQUEST_MODEL: s.model.name,
        sc.RUN_ID: run_id,
        sc.DOMAIN: s.domain.name,
        sc.CASE_ID: case.id,
        sc.CASE_DIMENSION: case.dimension,
        sc.CASE_REPEAT: repeat,
    }
    if turn is not None:
        attrs[sc.CASE_TURN] = turn
    tools = (
        s.domain.tools
        if offered is None
        else tuple(t for t in s.domain.tools if t["function"]["name"] in offered)
    )
    final_text = error_type = error_message = None
    with timed_span(
        s.tracer, f"invoke_agent {s.spec.subject}", SpanKind.INTERNAL, attrs, time.time_ns
    ) as root:
        toolbox = ToolBox(s.domain, sandbox, s.tracer, conversation, root)
        ctx = root.get_span_context()
        trace_id = format(ctx.trace_id, "032x")
        s.traces.add(case.id, repeat, CaseRoot(trace_id, format(ctx.span_id, "016x")), turn or 0)
        deadline = started + s.timeout_s
        try:
            if goal is not None:
                talk, history = goal
                history.append({"role": "user", "content": talk.message()})
                messages = tuple(history)
            with s.server.tools_for(toolbox) as key:
                agent_case = AgentCase(
                    case.id, run_id, repeat, case.dimension, messages, s.domain.system_prompt, tools,
                    s.model.name, s.model.base_url, s.model.api_key, s.server.tools_url(key),
                    s.mcp_url(key) if s.mcp_url else None, toolbox, turn=turn or 0,
                    conversation_id=conversation,
                )  # fmt: skip
                if s.agent_fn is not None:
                    final_text = call_agent(s.agent_fn, agent_case, deadline, stop)
                else:
                    traceparent = f"00-{trace_id}-{format(ctx.span_id, '016x')}-01"
                    final_text = _command(s, agent_case, traceparent, deadline, stop, root.set_attribute)
            if goal is not None:
                goal[0].answered(turn or 0, final_text, root)
        except UserModelError as exc:
            error_type, error_message = USER_MODEL_ERROR, str(exc)
        except AgentFailed as exc:
            error_type, error_message = exc.error_type, str(exc)
        except CaseStopped:
            error_type, error_message = INTERRUPTED, "the run was stopped before this case finished"
        except Exception as exc:  # a bug must cost one case, recorded on its own trace, never the run
            error_type, error_message = "internal_error", f"{type(exc).__name__}: {exc}"
        finally:
            toolbox.end()  # an abandoned agent's later calls change nothing
        status = "ok" if error_type is None else "error"
        if error_type is not None:
            root.set_status(Status(StatusCode.ERROR, error_message))
            root.set_attribute(sc.ERROR_TYPE, error_type)
        root.set_attribute(sc.AGENT_STATUS, status)
        root.set_attribute(sc.SANDBOX_LEDGER, ledger_json(sandbox))
        if final_text is not None:
            root.set_attribute(sc.OUTPUT_MESSAGES, _answer_messages(final_text))
    return AgentOutcome(
        trace_id, status, error_type, error_message, toolbox.calls, final_text, 0, 0,
        (time.monotonic() - started) * 1000,
    )  # fmt: skip


def _answer_messages(text: str) -> str:
    message = {"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}
    return json.dumps([message], ensure_ascii=False)


def _command(
    s: CaseSetting, case: AgentCase, traceparent: str, deadline: float, stop: threading.Event,
    note: Callable[[str, Any], None],
) -> str | None:  # fmt: skip
    """Run the command for one case; its answer, or `AgentFailed` with the exit code and stderr."""
    payload = json.dumps(case.to_json(), ensure_ascii=False).encode()
    with tempfile.NamedTemporaryFile(prefix="traceladder-case-", suffix=".json") as case_file:
        case_file.write(payload)
        case_file.flush()
        env = case_environment(
            os.environ, receiver_url=s.server.url, run_id=case.run_id, case_id=case.id, repeat=case.repeat,
            turn=case.turn, traceparent=traceparent, tools_url=case.tools_url or "", mcp_url=case.mcp_url,
            model=case.model, model_url=case.base_url, api_key=case.api_key, case_file=case_file.name,
        )  # fmt: skip
        try:
            result = run_command(s.spec.argv, payload, env, deadline, stop)
        except OSError as exc:
            raise AgentFailed(
                "agent_exec", f"cannot start {s.spec.argv[0]!r}: {exc.strerror or exc}"
            ) from None
    _note(result, note)
    if result.exit_code is None:
        raise AgentFailed(
            "timeout", f"the agent command did not exit within {s.timeout_s:g}s; killed" + _tail(result)
        )
    if result.exit_code != 0:
        raise AgentFailed("agent_exit", f"the agent command exited with {result.exit_code}" + _tail(result))
    return result.stdout.strip() or None


def _note(result: CommandResult, note: Callable[[str, Any], None]) -> None:
    if result.exit_code is not None:
        note("traceladder.agent.exit_code", result.exit_code)
    if result.stderr_tail:
        note("traceladder.agent.stderr_tail", result.stderr_tail)
    if result.stdout_truncated:
        note("traceladder.agent.stdout_truncated", True)


def _tail(result: CommandResult) -> str:
    lines = [line for line in result.stderr_tail.strip().splitlines() if line.strip()]
    return f": {lines[-1][:300]}" if lines else ""
