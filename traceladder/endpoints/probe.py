"""The endpoint check: one cheap request before any work, and the words for what went wrong.

`check_endpoint` asks `GET {base}/models` once. Only an answer that proves the endpoint unusable
stops the caller: it cannot be reached (connection refused, DNS, TLS, a connect timeout), or it
refuses the key (401) or the request (403). Anything else — 404 (many local servers have no
`/models` route, so a 404 there is not "model not found"), 405/501, 429, 5xx, a read timeout, a
page that is not JSON — proves nothing, and the caller goes on: its first model request is then
the probe (`traceladder.produce.agent.breaker`), where a 404 does mean the model or the path is wrong.
"""

from __future__ import annotations

import openai

from traceladder.errors import UserError
from traceladder.produce.agent.retry import classify, connection_cause

# Request error types that show the endpoint itself is unusable when nothing has worked yet.
DECISIVE = frozenset({"http_401", "http_403", "http_404", "connection"})
PROBE_TIMEOUT_S = 30.0


class EndpointUnusable(UserError):
    """The endpoint cannot serve this run: unreachable, or it refuses the key, the request or the
    model. One line naming the cause and the (redacted) URL; exit 2."""


def explain(error_type: str, cause: str | None = None, *, model: str | None = None) -> str:
    """What a request error type means, as the rest of a sentence that starts with the endpoint."""
    if error_type == "connection":
        return f"cannot be reached: {cause or 'connection failed'}"
    if error_type in ("timeout", "read_timeout"):
        return "did not answer in time (--request-timeout)"
    if error_type == "http_401":
        return "refused the API key (401 Unauthorized)"
    if error_type == "http_403":
        return "refused the request (403 Forbidden: the key may not use this model or endpoint)"
    if error_type == "http_404":
        named = f"model {model!r}" if model else "the model"
        return (
            f"answered 404 Not Found to a chat request: {named} is not served there, or the base "
            "URL is wrong (does it end in /v1?)"
        )
    if error_type == "http_429":
        return "kept refusing with 429 Too Many Requests (rate limit or quota)"
    if error_type.startswith("http_"):
        return f"kept failing with HTTP {error_type.removeprefix('http_')}"
    if error_type.startswith("response_"):
        return (
            f"did not answer with a chat completion ({error_type}): is the base URL an OpenAI-compatible API?"
        )
    return f"failed ({error_type})"


def describe(
    what: str, url: str, error_type: str, cause: str | None, key_note: str, *, model: str | None = None
) -> str:
    """`{what} {url} {explanation}`, with the key's origin when the key is the question."""
    text = f"{what} {url} {explain(error_type, cause, model=model)}"
    return f"{text}; {key_note}" if error_type in ("http_401", "http_403") else text


def check_endpoint(
    client: openai.OpenAI, *, what: str, url: str, key_note: str, timeout_s: float = PROBE_TIMEOUT_S
) -> None:
    """One `GET /models`; raises `EndpointUnusable` only for a decisive answer (module docstring).
    `url` is the redacted URL to show; the request's headers never reach a message."""
    try:
        client.models.with_raw_response.list(timeout=timeout_s)
    except openai.APITimeoutError as exc:  # a read timeout proves nothing; a connect timeout does
        cause = connection_cause(exc)
        if cause == "timed out connecting":
            raise EndpointUnusable(describe(what, url, "connection", cause, key_note)) from None
    except openai.APIConnectionError as exc:
        raise EndpointUnusable(describe(what, url, "connection", connection_cause(exc), key_note)) from None
    except openai.APIStatusError as exc:
        error_type, _, _ = classify(exc)
        if error_type in ("http_401", "http_403"):
            raise EndpointUnusable(describe(what, url, error_type, None, key_note)) from None
    except openai.APIError:  # anything else the client raises proves nothing either
        pass
