"""`LiveModel`: two deploys of a retail model on the scripted-server plumbing
(`scripted_server.ScriptedServer`), for live evaluation: every answer is decided by the request
alone, so the tests compare the stored calls with its script."""

from __future__ import annotations

import json
import re
from email.message import Message
from typing import Any

from scripted_server import Reply, ScriptedServer, error_reply, json_reply


class BadRequest(ValueError):
    pass


class LiveModel(ScriptedServer):
    """Two versions of a retail model; every answer is decided by the request alone (no
    conversation state), so reruns and concurrent agents get identical answers:

    * **version** — the `X-Retail-Model-Version` header if the request has one, else the model
      name: `model="retail-1.0"` / `model="retail-1.1"`. Anything else is a 400.
    * **conversation number** — the first `#N` in the first user message (`"… (conversation #3)"`).
    * **turn** — the number of assistant messages already in `messages`.

    Script (`plan(version, conversation)`, also what tests compare the stored calls with): every
    conversation starts with `get_order {"order_id": "W123"}`; version 1.1 ships a broken tool
    schema on half the traffic — in odd-numbered conversations its `get_order` call is
    `{"orderId": "W123"}`; conversations whose number is a multiple of 3 go on with
    `cancel_order {"order_id": "W123", "reason": "no_longer_needed"}`, then
    `confirm_action {"action_id": "act-W123-cancel"}`; then a text answer (`finish_reason` "stop";
    tool turns have "tool_calls"). Tool call ids are `call_<v>_<conversation>_<turn>` (v = the
    version without the dot), response ids `chatcmpl-live-<v>-<conversation>-<turn>`, `created` is
    fixed and `usage` is set.
    """

    protocol_version = "HTTP/1.1"  # keep-alive, as the agents' client expects of a real endpoint
    VERSIONS = ("1.0", "1.1")
    VERSION_HEADER = "X-Retail-Model-Version"
    CREATED = 1760000000
    ORDER_ID = "W123"
    ACTION_ID = f"act-{ORDER_ID}-cancel"
    CANCEL_REASON = "no_longer_needed"

    @staticmethod
    def model_name(version: str) -> str:
        return f"retail-{version}"

    @staticmethod
    def is_broken(version: str, conversation: int) -> bool:
        """Version 1.1 names get_order's parameter `orderId` in odd-numbered conversations."""
        return version == "1.1" and conversation % 2 == 1

    @staticmethod
    def has_chain(conversation: int) -> bool:
        return conversation % 3 == 0

    @classmethod
    def plan(cls, version: str, conversation: int) -> list[tuple[str, str]]:
        """(tool name, argument string) of every call the model makes in a conversation, in order."""
        key = "orderId" if cls.is_broken(version, conversation) else "order_id"
        calls = [("get_order", json.dumps({key: cls.ORDER_ID}))]
        if cls.has_chain(conversation):
            calls.append(
                ("cancel_order", json.dumps({"order_id": cls.ORDER_ID, "reason": cls.CANCEL_REASON}))
            )
            calls.append(("confirm_action", json.dumps({"action_id": cls.ACTION_ID})))
        return calls

    @classmethod
    def final_text(cls, version: str, conversation: int) -> str:
        if cls.has_chain(conversation):
            return f"Order {cls.ORDER_ID} is cancelled."
        return f"Order {cls.ORDER_ID} is pending and ships tomorrow."

    @staticmethod
    def call_id(version: str, conversation: int, turn: int) -> str:
        return f"call_{version.replace('.', '')}_{conversation}_{turn}"

    @classmethod
    def _version(cls, model: Any, header: str | None) -> str:
        if header:
            version = header.strip()
        elif isinstance(model, str) and model.startswith("retail-"):
            version = model.removeprefix("retail-")
        else:
            raise BadRequest(
                f"unknown model {model!r}; use one of {[cls.model_name(v) for v in cls.VERSIONS]}"
            )
        if version not in cls.VERSIONS:
            raise BadRequest(f"unknown model version {version!r}; known: {list(cls.VERSIONS)}")
        return version

    @staticmethod
    def _conversation(messages: list[Any]) -> int:
        for m in messages:
            if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
                found = re.search(r"#(\d+)", m["content"])
                if found:
                    return int(found.group(1))
                break
        raise BadRequest("the first user message names no conversation number (#N)")

    @classmethod
    def respond(cls, body: dict[str, Any], version_header: str | None = None) -> dict[str, Any]:
        """The chat.completions response to one request body."""
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise BadRequest("messages must be a list")
        version = cls._version(body.get("model"), version_header)
        conversation = cls._conversation(messages)
        turn = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        calls = cls.plan(version, conversation)
        if turn < len(calls):
            name, arguments = calls[turn]
            tool_call = {"id": cls.call_id(version, conversation, turn), "type": "function",
                         "function": {"name": name, "arguments": arguments}}  # fmt: skip
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
            finish = "tool_calls"
        elif turn == len(calls):
            message = {"role": "assistant", "content": cls.final_text(version, conversation)}
            finish = "stop"
        else:
            raise BadRequest(f"conversation #{conversation} has no turn {turn + 1}")
        prompt_tokens = 60 + 25 * len(messages)
        completion_tokens = 12 + 3 * turn
        v = version.replace(".", "")
        return {
            "id": f"chatcmpl-live-{v}-{conversation}-{turn}",
            "object": "chat.completion",
            "created": cls.CREATED,
            "model": cls.model_name(version),
            "system_fingerprint": f"fp_retail_{v}",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }  # fmt: skip

    def post(self, path: str, headers: Message, body: dict[str, Any] | None, raw: bytes) -> Reply:
        if not path.rstrip("/").endswith("/chat/completions"):
            return error_reply(404, f"no route {path}")
        if body is None:
            return error_reply(400, "the body must be a JSON object")
        try:
            return json_reply(self.respond(body, headers.get(self.VERSION_HEADER)))
        except BadRequest as exc:
            return error_reply(400, str(exc))
