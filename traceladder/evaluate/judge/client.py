"""One judgment from any OpenAI-compatible server, through the real `openai` client.

Temperature 0 and a fixed seed (servers that take one are then as repeatable as they can be); the
reply's JSON Schema goes as `response_format` where the server takes it — a server that refuses
the field is asked again without it, once per client — and every reply is parsed and validated
either way. A reply that is not the JSON asked for, or a request that fails, is retried once; then
it is a judge error for that trace, with the reason. Nothing here raises for a bad judge: a judge
outage must cost judgments, never the evaluation.
"""

from __future__ import annotations

import json
import threading
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx2
import openai
from jsonschema import Draft202012Validator

from traceladder.endpoints.probe import check_endpoint
from traceladder.evaluate.judge.endpoint import DEFAULT_BASE_URL, JudgeEndpoint
from traceladder.evaluate.judge.rubric import Prompt, reply_schema
from traceladder.evaluate.rungs.judge import CriterionVerdict
from traceladder.produce.agent.config import redact_url
from traceladder.produce.agent.retry import classify, connection_cause

SEED = 0


class Reply(NamedTuple):
    criteria: tuple[CriterionVerdict, ...] | None  # None: no usable reply (see `error`)
    error: str | None
    input_tokens: int
    output_tokens: int
    attempts: int
    text: str | None  # the reply's content, as sent
    response_model: str | None


class JudgeClient:
    """Thread-safe: judging runs calls concurrently."""

    def __init__(self, endpoint: JudgeEndpoint) -> None:
        self.endpoint = endpoint
        # The openai client appends paths to the base URL's text, query included, so query
        # parameters (api-version=…) travel as default_query (as for the agent's client).
        parts = urlsplit(endpoint.base_url or DEFAULT_BASE_URL)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        http = httpx2.Client(transport=endpoint.transport) if endpoint.transport is not None else None
        self._client = openai.OpenAI(
            api_key=endpoint.api_key or "unused-by-local-servers",
            base_url=urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            default_query=query or None,
            max_retries=0,
            timeout=endpoint.timeout_s,
            http_client=http,
        )
        self._refused: set[str] = set()  # optional request fields this server said it does not take
        self._lock = threading.Lock()
        self._validators: dict[tuple[str, ...], Draft202012Validator] = {}

    def close(self) -> None:
        self._client.close()

    def check(self) -> None:
        """The endpoint check (`endpoints.probe`): raises `EndpointUnusable` when the judge
        cannot be reached or refuses the key; a simulated judge has nothing to check."""
        if self.endpoint.transport is not None:
            return
        source = self.endpoint.key_source
        note = f"the key came from {source}" if source else "no API key was sent to this host"
        check_endpoint(
            self._client,
            what="the judge endpoint",
            url=redact_url(self.endpoint.base_url or DEFAULT_BASE_URL) or "",
            key_note=note if source else f"{note} (set TRACELADDER_JUDGE_API_KEY for it)",
            timeout_s=min(self.endpoint.timeout_s, 30.0),
        )

    def _validator(self, criteria: tuple[str, ...]) -> Draft202012Validator:
        with self._lock:
            found = self._validators.get(criteria)
            if found is None:  # compiled once per set of criteria asked
                found = self._validators[criteria] = Draft202012Validator(reply_schema(criteria))
            return found

    def ask(self, prompt: Prompt, trajectory_text: str, codes: dict[str, str]) -> Reply:
        messages = [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": trajectory_text},
        ]
        tokens_in = tokens_out = 0
        error = "no attempt"
        text = model = None
        for attempt in (1, 2):
            try:
                response = self._create(messages, prompt.criteria)
            except openai.APIError as exc:
                error_type, _, _ = classify(exc)
                cause = f": {connection_cause(exc)}" if error_type == "connection" else ""
                error = f"the judge request failed ({error_type}){cause}"
                continue
            usage = getattr(response, "usage", None)
            tokens_in += int(getattr(usage, "prompt_tokens", 0) or 0)
            tokens_out += int(getattr(usage, "completion_tokens", 0) or 0)
            model = getattr(response, "model", None)
            parsed, text, error = self._parse(response, prompt.criteria, codes)
            if parsed is not None:
                return Reply(parsed, None, tokens_in, tokens_out, attempt, text, model)
        return Reply(None, f"{error} (after 2 attempts)", tokens_in, tokens_out, 2, text, model)

    def _create(self, messages: list[dict[str, str]], criteria: tuple[str, ...]) -> Any:
        """One request. A server that refuses an optional field (`response_format`, `seed`) by
        name is asked again without it, and never sent it again by this client."""
        while True:
            kwargs: dict[str, Any] = {"model": self.endpoint.model, "messages": messages, "temperature": 0}
            if "seed" not in self._refused:
                kwargs["seed"] = SEED
            if "response_format" not in self._refused:
                schema = {"name": "judgment", "schema": reply_schema(criteria), "strict": True}
                kwargs["response_format"] = {"type": "json_schema", "json_schema": schema}
            try:
                return self._client.chat.completions.create(**kwargs)
            except openai.BadRequestError as exc:
                refused = [f for f in ("response_format", "seed") if f in kwargs and f in str(exc.message)]
                if not refused:
                    raise
                with self._lock:
                    self._refused.update(refused)

    def _parse(
        self, response: Any, criteria: tuple[str, ...], codes: dict[str, str]
    ) -> tuple[tuple[CriterionVerdict, ...] | None, str | None, str]:
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        text = getattr(message, "content", None) if message is not None else None
        if not isinstance(text, str) or not text.strip():
            return None, None, "the judge's reply had no content"
        try:
            data = json.loads(_unfenced(text))
        except ValueError:
            return None, text, "the judge's reply is not JSON"
        errors = sorted(self._validator(criteria).iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
            return (
                None,
                text,
                f"the judge's reply does not follow the schema at {where}: {errors[0].message[:200]}",
            )
        verdicts = data["criteria"]
        parsed = tuple(
            CriterionVerdict(
                c, verdicts[c]["verdict"], " ".join(verdicts[c]["reason"].split())[:500], codes[c]
            )
            for c in criteria
        )
        return parsed, text, ""


def _unfenced(text: str) -> str:
    """Models asked for JSON in prose often wrap it in a Markdown code fence."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    return body
