"""Choosing the model: flags and standard env vars → an `openai` client and its endpoint.

The API key is read here and handed only to the `openai` client; it never enters configuration,
spans, rows, logs or error messages.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlparse, urlsplit, urlunsplit

import httpx2
import openai

from traceladder.agent.config import AgentConfig
from traceladder.agent.loop import ClientFactory, Endpoint
from traceladder.agent.sim import SIM_HOST, SimModel, SimSpec, is_sim
from traceladder.cases.model import Case
from traceladder.domain.base import Domain
from traceladder.errors import UserError

DEFAULT_MODEL = "sim:faulty"
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ModelChoice:
    model: str
    base_url: str | None
    api_key: str | None
    defaulted: bool  # no model was configured: we fell back to the simulator


def choose_model(
    model: str | None, base_url: str | None, env: Mapping[str, str] | None = None
) -> ModelChoice:
    """Resolve model, base URL and key from flags, then TRACELADDER_MODEL / OPENAI_MODEL,
    OPENAI_BASE_URL, OPENAI_API_KEY / OPENROUTER_API_KEY."""
    env = os.environ if env is None else env
    chosen = model or env.get("TRACELADDER_MODEL") or env.get("OPENAI_MODEL")
    if not chosen:
        return ModelChoice(DEFAULT_MODEL, None, None, True)
    if is_sim(chosen):
        return ModelChoice(chosen, None, None, False)
    url = base_url or env.get("OPENAI_BASE_URL")
    if url:
        check_base_url(url, "--base-url" if base_url else "OPENAI_BASE_URL")
    key = env.get("OPENAI_API_KEY") or env.get("OPENROUTER_API_KEY")
    if not url and env.get("OPENROUTER_API_KEY") and not env.get("OPENAI_API_KEY"):
        url = OPENROUTER_BASE_URL
    if not key and not url:
        raise UserError(
            f"model {chosen!r} needs OPENAI_API_KEY (or OPENROUTER_API_KEY), or --base-url for a "
            "local server; or use --model sim:faulty"
        )
    return ModelChoice(chosen, url, key, False)


def check_base_url(url: str, where: str) -> None:
    """An http(s) URL with a host, or a `UserError` (the message never repeats the URL: it may
    hold credentials)."""
    try:
        parts = urlparse(url)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        raise UserError(f"{where} is not a valid URL; use e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(
            f"{where} must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1"
        )


def announce_default(choice: ModelChoice) -> None:
    if choice.defaulted:
        print(
            "traceladder: no model configured (--model or TRACELADDER_MODEL), so this run uses the "
            "built-in simulated model sim:faulty; its scores describe the simulator, not a real model",
            file=sys.stderr,
        )


def build_client(
    choice: ModelChoice,
    config: AgentConfig,
    cases: Sequence[Case],
    domain: Domain,
    *,
    sim_delay_s: float = 0.0,
) -> tuple[ClientFactory, Endpoint, SimModel | None]:
    """A factory of real `openai` clients (one per case, so a stuck request can be cut off by
    closing its client) — over an in-process transport for `sim:*` models."""
    if is_sim(choice.model):
        try:
            spec = SimSpec.parse(choice.model)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        sim = SimModel(spec, cases, domain, seed=config.sim_seed or 0, delay_s=sim_delay_s)

        def sim_client() -> openai.OpenAI:
            http = httpx2.Client(transport=sim.transport())
            return openai.OpenAI(
                api_key="sim", base_url=f"http://{SIM_HOST}/v1", http_client=http, max_retries=0
            )

        return sim_client, endpoint_for(choice), sim

    # The openai client appends paths to the base URL's text, query included ("…?k=v" becomes
    # "…?k=vchat/completions"), so query parameters (api-key=…, api-version=…) travel as
    # default_query on every request instead.
    parts = urlsplit(choice.base_url or DEFAULT_BASE_URL)
    base_url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    query = dict(parse_qsl(parts.query, keep_blank_values=True))

    def client() -> openai.OpenAI:
        return openai.OpenAI(
            api_key=choice.api_key or "unused-by-local-servers",
            base_url=base_url,
            default_query=query or None,
            max_retries=0,  # our RetryPolicy decides, and records what it did
            timeout=config.request_timeout_s,
        )

    return client, endpoint_for(choice), None


def endpoint_for(choice: ModelChoice) -> Endpoint:
    """Provider, host and port as recorded on spans and in the run row (one derivation for both)."""
    if is_sim(choice.model):
        return Endpoint("traceladder.sim", SIM_HOST, None)
    url = urlparse(choice.base_url or DEFAULT_BASE_URL)
    provider = "openrouter" if "openrouter" in (url.hostname or "") else "openai"
    return Endpoint(provider, url.hostname or "", url.port)
