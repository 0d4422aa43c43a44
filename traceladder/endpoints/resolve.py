"""Which model, URL and key — one rule for the agent and the judge.

A key goes only to the host it was issued for:

* a role's own key (`TRACELADDER_JUDGE_API_KEY` for the judge) goes to that role's URL;
* `OPENROUTER_API_KEY` goes only to OpenRouter's host;
* `OPENAI_API_KEY` goes only to the host the OpenAI settings name: `OPENAI_BASE_URL` (for the
  agent also `--base-url`, its flag form), else api.openai.com.

A role without a URL of its own uses the shared default: `OPENAI_BASE_URL`, else OpenAI when an
OpenAI (or the role's own) key is set, else OpenRouter when only `OPENROUTER_API_KEY` is.
`TRACELADDER_OPENAI_URL` / `TRACELADDER_OPENROUTER_URL` replace the two built-in provider URLs
(tests, a gateway); keys follow the replaced URLs. Nothing here reads or prints a key's value
except to hand it back; messages name the variable it came from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlparse

from traceladder.errors import UserError

OPENAI_URL = "https://api.openai.com/v1"
OPENROUTER_URL = "https://openrouter.ai/api/v1"
OPENAI_URL_VAR = "TRACELADDER_OPENAI_URL"
OPENROUTER_URL_VAR = "TRACELADDER_OPENROUTER_URL"
OPENAI_KEY = "OPENAI_API_KEY"
OPENROUTER_KEY = "OPENROUTER_API_KEY"
OPENAI_BASE_URL = "OPENAI_BASE_URL"


@dataclass(frozen=True)
class Role:
    """Where one role (the agent's model, the judge) takes its settings from."""

    what: str  # "model" / "judge model", for messages
    model_vars: tuple[str, ...]
    url_flag: str
    url_var: str
    own_key_var: str | None
    sim_hint: str
    # The role's URL is the OpenAI settings' URL, so OPENAI_API_KEY is its key (the agent's
    # --base-url is the flag form of OPENAI_BASE_URL).
    openai_settings: bool


AGENT = Role(
    "model", ("TRACELADDER_MODEL", "OPENAI_MODEL"), "--base-url", OPENAI_BASE_URL, None,
    "--model sim:faulty", True,
)  # fmt: skip
JUDGE = Role(
    "judge model", ("TRACELADDER_JUDGE_MODEL",), "--judge-base-url", "TRACELADDER_JUDGE_BASE_URL",
    "TRACELADDER_JUDGE_API_KEY", "--judge-model sim:judge", False,
)  # fmt: skip


@dataclass(frozen=True)
class Resolved:
    """A non-simulated model's endpoint. `explicit_url` is the URL as configured (None: the
    OpenAI default, chosen by key); `url` is where requests go."""

    model: str
    url: str
    explicit_url: str | None
    api_key: str | None
    key_source: str | None  # the variable the key came from; None: no key is sent

    def key_note(self) -> str:
        """For an error message: which key was sent, by variable name, never by value."""
        if self.key_source:
            return f"the key came from {self.key_source}"
        return "no API key was sent to this host"


def chosen_model(role: Role, flag: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The role's model from its flag, then its variables; None when none is set."""
    env = os.environ if env is None else env
    return flag or next((env[v] for v in role.model_vars if env.get(v)), None)


def provider_url(name: str, env: Mapping[str, str] | None = None) -> str:
    """A built-in provider URL (`openai` / `openrouter`), or its replacement from the environment."""
    env = os.environ if env is None else env
    var, default = (OPENAI_URL_VAR, OPENAI_URL) if name == "openai" else (OPENROUTER_URL_VAR, OPENROUTER_URL)
    url = env.get(var)
    if url:
        check_base_url(url, var)
        return url
    return default


def resolve(role: Role, model: str, url_flag: str | None, env: Mapping[str, str] | None = None) -> Resolved:
    """The endpoint and key for a non-simulated `model` (see the module docstring for the rule).

    Raises `UserError` for a malformed URL, or when no URL is configured and no key is set."""
    env = os.environ if env is None else env
    own_key = env.get(role.own_key_var) if role.own_key_var else None
    openai_key, openrouter_key = env.get(OPENAI_KEY), env.get(OPENROUTER_KEY)
    explicit = url_flag or env.get(role.url_var) or None
    if explicit:
        check_base_url(explicit, role.url_flag if url_flag else role.url_var)
    shared = env.get(OPENAI_BASE_URL) or None
    if shared and not explicit:
        check_base_url(shared, OPENAI_BASE_URL)
    url = explicit or shared
    openrouter = provider_url("openrouter", env)
    if url is None:
        if own_key or openai_key:
            url = provider_url("openai", env)
        elif openrouter_key:
            url = explicit = openrouter  # recorded: the run went to OpenRouter, not to the default
        else:
            keys = f"{role.own_key_var}, OPENAI_API_KEY" if role.own_key_var else "OPENAI_API_KEY"
            raise UserError(
                f"{role.what} {model!r} needs {keys} or OPENROUTER_API_KEY, or {role.url_flag} for a "
                f"local server; or use {role.sim_hint}"
            )
    openai_home = (explicit if role.openai_settings else None) or shared or provider_url("openai", env)
    key, source = None, None
    if own_key:
        key, source = own_key, role.own_key_var
    elif openrouter_key and same_host(url, openrouter):
        key, source = openrouter_key, OPENROUTER_KEY
    elif openai_key and same_host(url, openai_home):
        key, source = openai_key, OPENAI_KEY
    return Resolved(model, url, explicit, key, source)


def same_host(a: str, b: str) -> bool:
    """Whether two URLs name the same host and port (the port defaulted by scheme)."""
    return _host_port(a) == _host_port(b)


def _host_port(url: str) -> tuple[str, int | None]:
    parts = urlparse(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return (parts.hostname or "").lower(), parts.port or default


def is_openrouter(url: str, env: Mapping[str, str] | None = None) -> bool:
    host = urlparse(url).hostname or ""
    return "openrouter" in host or same_host(url, provider_url("openrouter", env))


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
