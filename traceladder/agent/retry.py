"""Calling the model with the run's retry policy, and classifying what went wrong."""

from __future__ import annotations

import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import TypeVar

import openai

from traceladder.agent.config import RetryPolicy

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
    """(error_type, retryable, retry_after_s) for an exception from the openai client."""
    if isinstance(exc, openai.APITimeoutError):
        return "timeout", True, None
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


def call_with_retry(
    call: Callable[[], T],
    policy: RetryPolicy,
    *,
    deadline: float,
    on_retry: Callable[[int, str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, int]:
    """Run `call` until it succeeds; returns (result, attempts). Raises `ModelCallError` when the
    policy is exhausted, the error is not retryable, or waiting would pass `deadline`."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return call(), attempt
        except (openai.APIError, openai.APIConnectionError) as exc:
            error_type, retryable, retry_after = classify(exc)
            detail = f"{error_type} after {attempt} attempt(s): {type(exc).__name__}"
            if not retryable or attempt >= policy.max_attempts:
                raise ModelCallError(error_type, detail, attempt) from None
            wait = policy.delay(attempt, retry_after)
            if time.monotonic() + wait >= deadline:
                raise ModelCallError(
                    "timeout", f"case deadline reached while retrying {detail}", attempt
                ) from None
            if on_retry:
                on_retry(attempt, error_type)
            sleep(wait)
