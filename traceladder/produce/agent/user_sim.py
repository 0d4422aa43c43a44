"""A goal case's simulated user: who plays it, and the conversation it drives turn by turn.

A goal case (`suite.cases.model.UserGoal`) gives what the user wants instead of scripted messages. A
user model plays the user (tau-bench's design): `sim:user` (deterministic, no key,
`produce.agent.sim.user`) or any OpenAI-compatible model (`--user-model`, the client settings of
`--model`), which sees the goal's instructions as its system prompt and the dialogue with the
roles turned round (its own messages as the assistant's, the agent's answers as the user's) and
writes the user's next message; `STOP_TOKEN` in it says the user is done.

Every request of the user is a span of its own, `chat {user model}`, marked
`traceladder.role = "simulated_user"` (`semconv.ROLE`): extraction never reads it as the agent's
(no tool call, no model turn, no history), whatever it records. The opening message is asked for
inside turn 0's trace, before the agent; the user's reply to turn N's answer inside turn N's
trace, after the agent — so every user span sits in the trace of the answer it reacts to.

A user model that fails (an HTTP error, a timeout, an empty reply) raises `UserModelError`: the
turn it happened in ends with `error.type = user_model_error`, and is judged NOT_EVALUATED with
the reason — the agent is not blamed for the user's failure, and nothing is judged on a
conversation the user could not carry on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from traceladder.instrumentation import semconv as sc
from traceladder.produce.agent.messages import dumps, otel_messages
from traceladder.produce.agent.sim.user import SIM_USER, sim_user_reply
from traceladder.produce.agent.tool_execution import timed_span
from traceladder.suite.cases.model import UserGoal

STOP_TOKEN = "###STOP###"
USER_MODEL_ERROR = sc.USER_MODEL_ERROR  # error.type of a turn the simulated user failed in
ENDED_STOP = "stop"
ENDED_MAX_TURNS = "max_turns"
# The agent's greeting the user model answers first (it has nothing else to react to yet).
GREETING = "Hi! How can I help you today?"

# What the user model is told (tau-bench's user simulator works the same way: the goal as a
# system prompt, one message at a time, a token to say the conversation is over).
SYSTEM_PROMPT = """You are a user talking to a customer-service agent. Stay in role as the user.

Your goal:
{instructions}

Write only your next message to the agent, one short message at a time. Do not invent details the
goal does not give you. When your goal is reached, or it cannot be reached, reply with exactly
{stop} and nothing else."""


class UserModelError(Exception):
    """The simulated user could not answer; the message says why in one line."""


Transcript = list[tuple[str, str]]  # (speaker: "user" | "agent", text), oldest first


class UserModel(Protocol):
    """Plays the user: the next message after `transcript` (raw text; `STOP_TOKEN` says done)."""

    @property
    def name(self) -> str: ...

    def reply(self, goal: UserGoal, transcript: Transcript, record: Callable[[str, Any], None]) -> str: ...


@dataclass(frozen=True)
class SimUser:
    """`sim:user` (`produce.agent.sim.user`)."""

    name: str = SIM_USER

    def reply(self, goal: UserGoal, transcript: Transcript, record: Callable[[str, Any], None]) -> str:
        text = sim_user_reply(goal.instructions, transcript, STOP_TOKEN)
        record(sc.OUTPUT_MESSAGES, dumps([_text_message("assistant", text)]))
        return text


@dataclass(frozen=True)
class OpenAIUser:
    """An OpenAI-compatible model playing the user. `client_factory` is built like the agent's
    (`produce.agent.client.build_client`: the key only in the client, never on a span)."""

    name: str
    client_factory: Callable[[], openai.OpenAI]
    temperature: float = 0.0
    timeout_s: float = 60.0

    def reply(self, goal: UserGoal, transcript: Transcript, record: Callable[[str, Any], None]) -> str:
        messages = user_model_messages(goal, transcript)
        record(sc.INPUT_MESSAGES, dumps(otel_messages(messages)))
        client = self.client_factory()
        try:
            response = client.chat.completions.create(
                model=self.name, messages=messages,  # type: ignore[arg-type]
                temperature=self.temperature, timeout=self.timeout_s,
            )  # fmt: skip
        except openai.APIStatusError as exc:
            raise UserModelError(f"the user model {self.name} answered HTTP {exc.status_code}") from None
        except openai.APITimeoutError:
            raise UserModelError(
                f"the user model {self.name} did not answer within {self.timeout_s:g}s"
            ) from None
        except openai.APIError as exc:
            raise UserModelError(f"the user model {self.name} failed: {type(exc).__name__}") from None
        finally:
            client.close()
        choices = getattr(response, "choices", None) or []
        message = choices[0].message if choices else None
        if message is None:
            raise UserModelError(f"the user model {self.name} sent no message")
        record(sc.OUTPUT_MESSAGES, dumps([_output(message)]))
        text = (message.content or "").strip()
        if not text:
            raise UserModelError(f"the user model {self.name} sent an empty message")
        return text


def user_model_messages(goal: UserGoal, transcript: Transcript) -> list[dict[str, Any]]:
    """The chat request a user model answers: the goal as its system prompt, the agent's greeting,
    then the dialogue with the roles turned round (the model plays the user)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT.format(instructions=goal.instructions, stop=STOP_TOKEN)},
        {"role": "user", "content": GREETING},
    ]
    for speaker, text in transcript:
        messages.append({"role": "assistant" if speaker == "user" else "user", "content": text})
    return messages


def _text_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _output(message: Any) -> dict[str, Any]:
    """The user model's message as recorded, tool calls included if it sent any (never read)."""
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"type": "text", "content": message.content})
    for call in getattr(message, "tool_calls", None) or []:
        fn = getattr(call, "function", None)
        parts.append({
            "type": "tool_call", "id": getattr(call, "id", None), "name": getattr(fn, "name", None),
            "arguments": getattr(fn, "arguments", None),
        })  # fmt: skip
    return {"role": "assistant", "parts": parts, "finish_reason": "stop"}


@dataclass
class GoalConversation:
    """One goal case run's conversation from the user's side: the message each turn answers
    (`message`, inside the turn's trace) and the user's reaction to each answer (`answered`).
    `ended` says why it is over (`ENDED_STOP`, `ENDED_MAX_TURNS`), None while it goes on."""

    goal: UserGoal
    user: UserModel
    tracer: Tracer
    conversation_id: str
    clock: Callable[[], int]
    transcript: Transcript = field(default_factory=list)
    pending: str | None = None
    ended: str | None = None

    def message(self) -> str:
        """The user's message for the turn being played: the opening (asked for now, in turn 0's
        trace) or the reply to the last answer. A user that ends before saying anything, or
        fails, raises `UserModelError`."""
        if self.pending is None:
            text = self._ask()
            if STOP_TOKEN in text:
                raise UserModelError(
                    f"the user model {self.user.name} ended the conversation before it began"
                )
            self.pending = text
        text, self.pending = self.pending, None
        self.transcript.append(("user", text))
        return text

    def answered(self, turn: int, answer: str | None, root: Any) -> None:
        """The agent answered turn `turn` (0-based): the user reacts, inside that turn's trace
        (`root` its root span). The conversation ends at the stop token or at `max_turns`."""
        self.transcript.append(("agent", answer or ""))
        if turn + 1 >= self.goal.max_turns:
            self.ended = ENDED_MAX_TURNS
        else:
            text = self._ask()
            if STOP_TOKEN in text:
                self.ended = ENDED_STOP
            else:
                self.pending = text
        if self.ended is not None:
            root.set_attribute(sc.USER_ENDED, self.ended)

    def _ask(self) -> str:
        attrs: dict[str, Any] = {
            sc.OPERATION_NAME: sc.OP_CHAT,
            sc.REQUEST_MODEL: self.user.name,
            sc.CONVERSATION_ID: self.conversation_id,
            sc.ROLE: sc.ROLE_SIMULATED_USER,
        }
        with timed_span(self.tracer, f"chat {self.user.name}", SpanKind.CLIENT, attrs, self.clock) as span:
            try:
                return self.user.reply(self.goal, list(self.transcript), span.set_attribute)
            except UserModelError as exc:
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                span.set_attribute(sc.ERROR_TYPE, USER_MODEL_ERROR)
                raise
            except Exception as exc:  # a user model's bug must cost one case, never the run
                message = f"the user model {self.user.name} failed: {type(exc).__name__}: {exc}"
                span.set_status(Status(StatusCode.ERROR, message))
                span.set_attribute(sc.ERROR_TYPE, USER_MODEL_ERROR)
                raise UserModelError(message) from None


def user_model_for(
    name: str, client_factory: Callable[[], openai.OpenAI] | None, timeout_s: float
) -> UserModel:
    """`sim:user`, or an OpenAI-compatible model reached through `client_factory`."""
    if name == SIM_USER:
        return SimUser()
    if client_factory is None:
        raise ValueError(f"the user model {name} needs a client")
    return OpenAIUser(name, client_factory, timeout_s=timeout_s)


__all__ = [
    "STOP_TOKEN",
    "USER_MODEL_ERROR",
    "GoalConversation",
    "OpenAIUser",
    "SimUser",
    "UserModel",
    "UserModelError",
    "user_model_for",
    "user_model_messages",
]
