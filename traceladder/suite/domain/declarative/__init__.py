"""Declarative domains: a directory of data files, no Python — tool definitions, an optional
prompt, `domain.toml` (read-only tools, whitelist, fixture-backed ids, chains, the suite's
categories) and the recorded tool results a replay sandbox answers with (docs/your-own-agent.md).
"""

from traceladder.suite.domain.declarative.build import directory_spec, load_directory, read_directory
from traceladder.suite.domain.declarative.replay import NO_RECORDED_RESULT, ReplaySandbox, replay_key

__all__ = [
    "NO_RECORDED_RESULT",
    "ReplaySandbox",
    "directory_spec",
    "load_directory",
    "read_directory",
    "replay_key",
]
