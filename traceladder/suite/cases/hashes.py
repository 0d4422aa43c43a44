"""Input hashes: the identity that runs and baselines bind to.

Two runs are comparable only when every hash matches: the case suite, the tool schemas, the
fixtures, the policy, the system prompt and the run configuration. `inputs` hashes them together.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # cases never import domains at runtime: domains import their suite spec
    from traceladder.suite.domain.base import Domain

HASH_KEYS = ("cases", "tool_schemas", "fixtures", "policy", "system_prompt", "run_config")
# Recorded in `runs.config` but not part of the `run_config` hash: the model is compared on its
# own, and a simulated model's seed plays the part of sampling noise (`AgentConfig.identity`).
UNHASHED_CONFIG_KEYS = frozenset({"model", "sim_seed"})


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_json(value: Any) -> bytes:
    """Key-sorted, compact, UTF-8 JSON: equal values always give equal bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def input_hashes(suite: bytes, domain: Domain, run_config: dict[str, Any]) -> dict[str, str]:
    """SHA-256 of each input plus `inputs`, the hash of them all (in `HASH_KEYS` order).

    Domain files are hashed in canonical form where they are JSON, so re-indenting a fixture file
    does not change the identity, while any change of content does.
    """
    files = domain.input_files

    def file_hash(name: str, declared: str) -> str:
        # a declarative domain's recorded results and domain.toml stand where retail's fixtures
        # and policy do (a domain has one or the other, so no existing identity changes)
        raw = files.get(name, files.get(declared, b""))
        try:
            return sha256(canonical_json(json.loads(raw)))
        except ValueError:
            return sha256(raw)

    hashes = {
        "cases": sha256(suite),
        "tool_schemas": sha256(canonical_json(list(domain.tools))),
        "fixtures": file_hash("fixtures.json", "responses.jsonl"),
        "policy": file_hash("policy.json", "domain.toml"),
        "system_prompt": sha256(domain.system_prompt.encode()),
        "run_config": sha256(canonical_json(run_config)),
    }
    hashes["inputs"] = sha256("".join(hashes[k] for k in HASH_KEYS).encode())
    return hashes
