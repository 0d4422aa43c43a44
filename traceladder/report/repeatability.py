"""Whether runs are repetitions of one configuration — the one rule a consistency record and a
baseline lock share.

Runs repeat each other when each is listed once, each is complete, all ran the same selection of
cases, and all share the model and every input hash. The checks run in that order and the first
that fails is the answer; each caller words it (a consistency record says "not comparable", a lock
says "not locked"). Pure: the callers read the runs from the store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from traceladder.suite.cases.hashes import UNHASHED_CONFIG_KEYS

SHOWN_VALUE_CHARS = 60  # a value longer than this is cut in the message (the stored one is whole)


class Trial(Protocol):
    """What repeatability needs to know of one run (`store.runs.RunInfo` is one)."""

    @property
    def run_id(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def input_hashes(self) -> Mapping[str, str]: ...
    @property
    def config(self) -> Mapping[str, Any]: ...
    @property
    def selection(self) -> Mapping[str, Any]: ...
    @property
    def complete(self) -> bool: ...
    def incompleteness(self) -> str:
        """Why the run is not complete, in words (empty when it is)."""
        ...


@dataclass(frozen=True)
class NotRepeated:
    """The first reason the runs are not repetitions: `first` is the run the others are held to,
    `other` the one that differs; `differing` names what differs for kind "inputs" ("model" first,
    then the input hash keys; "run_config" with the configuration fields that differ)."""

    kind: Literal["incomplete", "selection", "inputs"]
    first: str
    other: str
    incompleteness: str = ""
    differing: tuple[str, ...] = ()


def listed_twice(run_ids: Sequence[str]) -> str | None:
    """The first run id (in sorted order) listed more than once: one run is one trial."""
    repeated = sorted({r for r in run_ids if list(run_ids).count(r) > 1})
    return repeated[0] if repeated else None


def not_repeated(trials: Sequence[Trial]) -> NotRepeated | None:
    """None when every trial repeats the first: complete, the same selection, the same model and
    input hashes. A selection differs before inputs are compared: a full run next to partial
    selections is not a repetition of it, whatever else differs."""
    if not trials:
        return None
    first = trials[0]
    for trial in trials:
        if not trial.complete:
            why = trial.incompleteness()
            return NotRepeated("incomplete", first.run_id, trial.run_id, incompleteness=why)
        if trial.selection != first.selection:
            return NotRepeated("selection", first.run_id, trial.run_id)
    for trial in trials[1:]:
        keys = sorted(set(first.input_hashes) | set(trial.input_hashes))
        differing = [k for k in keys if first.input_hashes.get(k) != trial.input_hashes.get(k)]
        if len(differing) > 1 and "inputs" in differing:  # the hash of the others: name those
            differing.remove("inputs")
        if "run_config" in differing:
            fields = config_differences(trial.config, first.config, other_name=first.run_id)
            differing[differing.index("run_config")] = f"run_config ({fields})"
        if trial.model != first.model:
            differing.insert(0, "model")
        if differing:
            return NotRepeated("inputs", first.run_id, trial.run_id, differing=tuple(differing))
    return None


def config_differences(config: Mapping[str, Any] | None, other: Mapping[str, Any] | None, *,
                       other_name: str) -> str:  # fmt: skip
    """The fields of two recorded run configurations (`runs.config`) that the `run_config` hash
    covers and that differ, each with both values: `base_url: "http://a/v1" vs <other_name>
    "http://b/v1"; max_steps: 8 vs <other_name> 10`. Nested fields are dotted (`retry.max_attempts`).
    When no recorded field differs (a configuration recorded by a version that hashed other
    fields, or none recorded) it says so rather than naming nothing."""
    mine, theirs = _flat(config or {}), _flat(other or {})
    keys = sorted(k for k in set(mine) | set(theirs) if k.split(".")[0] not in UNHASHED_CONFIG_KEYS)
    parts = [
        f"{k}: {_shown(mine, k)} vs {other_name} {_shown(theirs, k)}"
        for k in keys
        if mine.get(k, _ABSENT) != theirs.get(k, _ABSENT)
    ]
    if not parts:
        return "no recorded field differs; the configurations were hashed by different versions"
    return "; ".join(parts)


_ABSENT = object()


def _flat(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, Mapping) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _shown(config: Mapping[str, Any], key: str) -> str:
    if key not in config:
        return "(not set)"
    text = json.dumps(config[key], ensure_ascii=False, default=str)
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 1] + "…"
