"""Agent-framework producers: each module builds one framework's agent on the scripted model.

A module `frameworks/<name>.py` defines `CONFIG = FrameworkConfig(...)`; its `run(pipeline,
base_url, user_text, streaming)` imports the framework (inside the function: only the
framework's own venv has it), wires the framework's instrumentation to `pipeline` (the
TracerProvider from `pipeline.make_tracer_provider()`, set globally when the framework reads
the global one), builds an agent with the three tools below, runs `user_text` once with the
model client pointed at `base_url` (api key "sk-fixture-not-a-key", no retries), and returns
a `FrameworkRun`. Nothing sets a convention attribute by hand: the spans are the framework's.

Register a module by adding its name to `_MODULES`.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MODEL = "gpt-4o-mini"
API_KEY = "sk-fixture-not-a-key"
SYSTEM_PROMPT = "You are a concise travel assistant. Use the tools when they help."
AGENT_NAME = "travel-agent"


# The three tools every framework agent gets, as plain typed Python functions (frameworks derive
# their schemas from signatures and docstrings; the schema each one sent is in expected.json).
def get_weather(location: str) -> str:
    """Get the current weather for a location.

    Args:
        location: City name, e.g. Paris
    """
    return json.dumps({"location": location, "conditions": "sunny", "temperature_c": 22})


def get_time(city: str) -> str:
    """Get the current local time in a city.

    Args:
        city: The city.
    """
    return json.dumps({"city": city, "local_time": "14:05" if city == "Paris" else "21:05"})


def book_table(restaurant: str, party_size: int) -> str:
    """Book a restaurant table.

    Args:
        restaurant: The restaurant's name.
        party_size: How many people.
    """
    if not isinstance(party_size, int) or isinstance(party_size, bool) or party_size < 1:
        raise ValueError(f"party_size must be a positive integer, got {party_size!r}")
    return json.dumps({"restaurant": restaurant, "party_size": party_size, "confirmation": "BK-1042"})


TOOL_FUNCTIONS: list[Callable[..., str]] = [get_weather, get_time, book_table]


@dataclass
class FrameworkRun:
    final_text: str | None  # the framework's final answer, None when it stopped
    error: str | None = None  # why it stopped ("ExceptionType: message"), None when it finished
    detail: str | None = None


@dataclass
class FrameworkConfig:
    name: str  # fixture directory name, e.g. "langgraph-openinference"
    framework: str  # the framework, e.g. "langgraph"
    description: str
    env: dict[str, str]
    packages: list[str]  # distributions whose versions are recorded in expected.json
    run: Callable[[Any, str, str, bool], FrameworkRun]
    notes: list[str] = field(default_factory=list)  # what the capture could not control, etc.
    versions: Callable[[], dict[str, str]] | None = None  # a non-Python producer's versions (npm)


_MODULES: list[str] = [
    "openai_agents", "mcp_tools", "langgraph_agent", "smolagents_agent", "crewai_agent",
    "pydanticai", "strands_agents", "google_adk", "openai_agents_responses", "anthropic_messages", "litellm_agent",
    "vercel_ai",  # JavaScript producers (frameworks/node/)
    "google_genai",
]  # fmt: skip
_MODULES += ["bedrock_converse", "autogen_agentchat", "llamaindex_agent"]  # issue 32, Python producers (one line per merge)


def _load() -> dict[str, FrameworkConfig]:
    out: dict[str, FrameworkConfig] = {}
    for module in _MODULES:
        mod = importlib.import_module(f"frameworks.{module}")
        for config in getattr(mod, "CONFIGS", [getattr(mod, "CONFIG", None)]):
            if config is not None:
                out[config.name] = config
    return out


FRAMEWORKS: dict[str, FrameworkConfig] = _load()
