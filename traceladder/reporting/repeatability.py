"""Whether runs are repetitions of one configuration — the one rule a consistency record and a
baseline lock share.

Runs repeat each other when each is listed once, each is complete, all ran the same selection of
cases, and all share the model and every input hash. The checks run in that order and the first
that fails is the answer; each caller words it (a consistency record says "not comparable", a lock
says "not locked"). Pure: the callers read the runs from the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol


class Trial(Protocol):
    """What repeatability needs to know of one run (`storage.runs.RunInfo` is one)."""

    @property
    def run_id(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def input_hashes(self) -> Mapping[str, str]: ...
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
    then the input hash keys)."""

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
        if trial.model != first.model:
            differing.insert(0, "model")
        if differing:
            return NotRepeated("inputs", first.run_id, trial.run_id, differing=tuple(differing))
    return None
