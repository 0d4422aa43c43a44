"""Choosing the model: flags and standard env vars → an `openai` client and its endpoint.

The API key is read here and handed only to the `openai` client; it never enters configuration,
spans, rows, logs or error messages.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlparse, urlsplit, urlunsplit

import httpx2
import openai

from traceladder.endpoints.resolve import AGENT, check_base_url, chosen_model, is_openrouter, resolve
from traceladder.errors import UserError
from traceladder.produce.agent.config import AgentConfig, redact_url
from traceladder.produce.agent.loop import ClientFactory, Endpoint
from traceladder.produce.agent.sim import SIM_HOST, SimModel, SimSpec, is_sim
from traceladder.suite.cases.model import Case
from traceladder.suite.domain.base import Domain

__all__ = ["DEFAULT_MODEL", "ModelChoice", "build_client", "check_base_url", "choose_model", "endpoint_for"]

DEFAULT_MODEL = "sim:faulty"


@dataclass(frozen=True)
class ModelChoice:
    model: str
    base_url: str | None  # as configured and recorded (None: the OpenAI default)
    api_key: str | None
    defaulted: bool  # no model was configured: we fell back to the simulator
    url: str | None = None  # where requests go (None for a simulated model)
    key_source: str | None = None  # the variable the key came from, for messages

    @property
    def shown_url(self) -> str:
        """The endpoint as a message may show it: credentials and query values redacted."""
        return redact_url(self.url) or ""


def choose_model(
    model: str | None, base_url: str | None, env: Mapping[str, str] | None = None
) -> ModelChoice:
    """Resolve model, base URL and key from flags, then TRACELADDER_MODEL / OPENAI_MODEL,
    OPENAI_BASE_URL, OPENAI_API_KEY / OPENROUTER_API_KEY — by the rule every role shares
    (`traceladder.endpoints.resolve`: a key only goes to the host it was issued for)."""
    chosen = chosen_model(AGENT, model, env)
    if not chosen:
        return ModelChoice(DEFAULT_MODEL, None, None, True)
    if is_sim(chosen):
        return ModelChoice(chosen, None, None, False)
    found = resolve(AGENT, chosen, base_url, env)
    return ModelChoice(chosen, found.explicit_url, found.api_key, False, found.url, found.key_source)


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
    assert choice.url is not None  # every non-simulated choice is resolved to a URL
    parts = urlsplit(choice.url)
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
    url = urlparse(choice.url or "")
    provider = "openrouter" if is_openrouter(choice.url or "") else "openai"
    return Endpoint(provider, url.hostname or "", url.port)
