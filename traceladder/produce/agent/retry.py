"""Calling the model with the run's retry policy, and classifying what went wrong."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import TypeVar

import openai

from traceladder.produce.agent.budget import Budget, DeadlineExceeded
from traceladder.produce.agent.config import RetryPolicy

T = TypeVar("T")
RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


class ModelCallError(Exception):
    """The model could not be reached or refused, after the retry policy gave up.

    `error_type` is short and stable (`http_429`, `http_500`, `connection`, `timeout`);
    the message never contains request headers, so it never contains the API key.
    """

    def __init__(self, error_type: str, message: str, attempts: int) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.attempts = attempts


def retry_after_seconds(headers: object) -> float | None:
    """Retry-After as seconds, from either form (delta-seconds or HTTP-date); `retry-after-ms`
    (sent by OpenAI) wins when present."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    millis = get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def classify(exc: Exception) -> tuple[str, bool, float | None]:
    """(error_type, retryable, retry_after_s) for an exception from the openai client.

    A read timeout (`read_timeout`) is told apart from a connect timeout: it means the server took
    the request and is still generating, so repeating it usually repeats the same long generation.
    """
    if isinstance(exc, openai.APITimeoutError):
        cause = type(exc.__cause__).__name__ if exc.__cause__ is not None else ""
        return ("read_timeout" if cause == "ReadTimeout" else "timeout"), True, None
    if isinstance(exc, openai.APIConnectionError):
        return "connection", True, None
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return (
            f"http_{status}",
            status in RETRYABLE_STATUS,
            retry_after_seconds(exc.response.headers),
        )
    return type(exc).__name__, False, None


def connection_cause(exc: BaseException) -> str:
    """Why a connection failed, in words a person acts on: `connection refused`, `DNS lookup
    failed`, `TLS failed (…)`, `timed out connecting`, else `connection failed`. Read from the
    exception's causes (the openai client wraps the transport's error, which wraps the OS's)."""
    seen: BaseException | None = exc
    for _ in range(10):  # the chain is short; a cycle must not loop
        if seen is None:
            break
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return "DNS lookup failed"
        if isinstance(seen, ssl.SSLError):
            reason = getattr(seen, "verify_message", None) or getattr(seen, "reason", None) or "handshake"
            return f"TLS failed ({reason})"
        if type(seen).__name__ == "ConnectTimeout":
            return "timed out connecting"
        seen = seen.__cause__ or seen.__context__
    return "connection failed"


# A server that timed out while generating is given one more chance, not the whole policy.
MAX_READ_TIMEOUT_RETRIES = 1


def call_with_retry(
    call: Callable[[], T],
    policy: RetryPolicy,
    budget: Budget,
    *,
    on_retry: Callable[[int, str], None] | None = None,
) -> tuple[T, int]:
    """Run `call` until it succeeds; returns (result, attempts). Raises `ModelCallError` when the
    policy is exhausted, the error is not retryable, or waiting would pass the case deadline;
    `CaseStopped` / `DeadlineExceeded` pass through from the budget."""
    attempt = 0
    read_timeouts = 0
    while True:
        attempt += 1
        try:
            return call(), attempt
        except (openai.APIError, openai.APIConnectionError) as exc:
            error_type, retryable, retry_after = classify(exc)
            detail = f"{error_type} after {attempt} attempt(s): {type(exc).__name__}"
            if error_type == "connection":
                detail += f" ({connection_cause(exc)})"
            if error_type == "read_timeout":
                read_timeouts += 1
                retryable = read_timeouts <= MAX_READ_TIMEOUT_RETRIES
            if not retryable or attempt >= policy.max_attempts:
                raise ModelCallError(error_type, detail, attempt) from None
            wait = policy.delay(attempt, retry_after)
            if on_retry:
                on_retry(attempt, error_type)
            try:
                budget.sleep(wait)
            except DeadlineExceeded:
                raise ModelCallError(
                    "timeout", f"case deadline reached while retrying {detail}", attempt
                ) from None
