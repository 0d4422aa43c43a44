"""The ladder: an ordered list of rungs with one contract, and the verdict as a fold over it.

A rung is any object (usually a module) with `NUMBER` (its tier on the cost ladder: 1 schema …
5 judge), `NAME`, `NEEDS` (the `TraceInputs` it cannot run without), `SURVIVORS_ONLY` (run only
when no lower rung failed — the judge's rule) and `evaluate(inputs, analysis) -> RungResult`.
Every rung is always reported: a rung whose inputs are absent is `not_evaluated` with the reason,
a survivors-only rung above a failure is `skipped` ("sent to triage"). Rung order decides which
rung *settles* the verdict, never what is visible.

Adding a rung is one module and one line in `BUILTIN` (or an entry point in the
`traceladder.rungs` group for a plug-in); results are stored long-form, so no migration.
Plug-in rungs are opt-in: installing a package that registers one changes nothing until a run
names it (`load_ladder(("step_budget",))`, from `--rungs` or the project's traceladder.toml),
and every result records the rungs beyond the built-ins in its evaluator version.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import Any, Protocol

from traceladder.errors import UserError
from traceladder.evaluate.rungs import (
    call_match,
    invariants,
    judge,
    partial_credit,
    schema,
    state,
    trajectory,
)
from traceladder.evaluate.rungs.analysis import Analysis
from traceladder.evaluate.rungs.classes import dominant
from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.types import RungResult, RungStatus, Verdict, VerdictValue, not_evaluated_note
from traceladder.plugins.loader import Kind, load

# Bumped whenever a verdict, class, score or explanation for the same trace can change; recorded
# with every result, and part of what a baseline binds to.
EVALUATOR_VERSION = "3.0.0"
GROUP = "traceladder.rungs"


class Rung(Protocol):
    @property
    def NUMBER(self) -> int: ...  # noqa: N802 - module constants are the contract

    @property
    def NAME(self) -> str: ...  # noqa: N802

    @property
    def NEEDS(self) -> frozenset[str]: ...  # noqa: N802

    @property
    def SURVIVORS_ONLY(self) -> bool: ...  # noqa: N802

    def evaluate(self, inputs: TraceInputs, analysis: Analysis) -> RungResult: ...


# The built-in rungs, in ladder order. Registering a rung is one line here.
BUILTIN: tuple[Rung, ...] = (schema, invariants, call_match, trajectory, partial_credit, state, judge)


def _reference(rung: Rung) -> Any:
    """How a rung travels to a worker process: a module by its import path, anything else as is."""
    return rung.__name__ if isinstance(rung, ModuleType) else rung


def _resolve(reference: Any) -> Rung:
    return import_module(reference) if isinstance(reference, str) else reference


@dataclass(frozen=True)
class Ladder:
    rungs: tuple[Rung, ...] = BUILTIN

    def __post_init__(self) -> None:
        names = [r.NAME for r in self.rungs]
        if len(set(names)) != len(names):
            raise ValueError(f"two rungs share a name: {names}")
        # Stable by tier: rungs of one tier keep their registration order.
        object.__setattr__(self, "rungs", tuple(sorted(self.rungs, key=lambda r: r.NUMBER)))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_ladder_from, (tuple(_reference(r) for r in self.rungs),))

    def with_rungs(self, extra: Iterable[Rung]) -> Ladder:
        return Ladder((*self.rungs, *extra))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.NAME for r in self.rungs)

    @property
    def version(self) -> str:
        """The evaluator version, plus every rung beyond the built-ins (they change verdicts)."""
        extra = [r.NAME for r in self.rungs if r not in BUILTIN]
        return EVALUATOR_VERSION + (f"+{'+'.join(extra)}" if extra else "")

    def settle(self, inputs: TraceInputs) -> Verdict:
        """Fold every rung over one trace into its verdict."""
        case = inputs.case
        if case is not None and case.skip:
            return Verdict(VerdictValue.SKIP, None, None, explanation=f"skipped: {case.skip_reason}")
        if inputs.agent_error:
            return Verdict(
                VerdictValue.AGENT_ERROR, None, None, explanation=f"agent error: {inputs.agent_error}"
            )
        if inputs.unread:
            # What was read is not the trace's whole story: judging it would turn "could not read
            # this" into "this is fine". Every rung reads the calls (state and the judge included:
            # a PASS there would still be a PASS of a trace whose calls nobody checked).
            # The fold's answer for a trace no rung could judge, with the one reason said once.
            reason = f"not evaluated: {inputs.unread}"
            rungs = tuple(_constant(rung, "not_evaluated", reason) for rung in self.rungs)
            return Verdict(VerdictValue.NOT_EVALUATED, None, None, None, rungs, reason, ())
        analysis = Analysis(inputs)
        results: list[RungResult] = []
        failed = False
        for rung, needs, survivors_only in _needs(self.rungs):
            # Triage first: a trace a lower rung failed is never a survivors-only rung's question,
            # whether or not that rung could have run.
            if survivors_only and failed:
                results.append(_constant(rung, "skipped", "a lower rung failed: sent to triage instead"))
                continue
            # the first input the rung needs that this trace lacks (a plain loop: the hot path)
            for need in needs:
                if getattr(inputs, need, None) is None:
                    result = _absent(rung, need, inputs)
                    break
            else:
                result = rung.evaluate(inputs, analysis)
                failed = failed or result.status == "fail"
            results.append(result)
        ignored = analysis.ignored_ordinals if analysis.matched else ()
        return settle_results(results, ignored)


# Per tuple of rungs: each with its needs in a fixed (sorted) order, worked out once, not per trace.
_NEEDS: dict[tuple[Rung, ...], tuple[tuple[Rung, tuple[str, ...], bool], ...]] = {}
# The results every trace a rung cannot judge shares (immutable values: one object serves them all).
_CONSTANT: dict[tuple[int, str, str, str], RungResult] = {}


def _needs(rungs: tuple[Rung, ...]) -> tuple[tuple[Rung, tuple[str, ...], bool], ...]:
    """Each rung with its needs (sorted) and whether it judges survivors only."""
    found = _NEEDS.get(rungs)
    if found is None:
        found = _NEEDS[rungs] = tuple((r, tuple(sorted(r.NEEDS)), bool(r.SURVIVORS_ONLY)) for r in rungs)
    return found


# A rung's not_evaluated result per (rung, missing input, the assembler's reason or None): found
# without formatting its explanation again for every trace that lacks the input.
_ABSENT: dict[tuple[Rung, str, str | None], RungResult] = {}


def _absent(rung: Rung, need: str, inputs: TraceInputs) -> RungResult:
    """`rung`'s not_evaluated result for a trace that lacks `need`."""
    key = (rung, need, inputs.absent.get(need))
    found = _ABSENT.get(key)
    if found is None:
        if len(_ABSENT) > 10_000:  # reasons quote inputs; keep the cache bounded
            _ABSENT.clear()
        found = _ABSENT[key] = _constant(rung, "not_evaluated", f"not evaluated: {inputs.why_absent(need)}")
    return found


def _constant(rung: Rung, status: RungStatus, explanation: str) -> RungResult:
    """A rung's `skipped` (triaged: a lower rung failed) or `not_evaluated` result."""
    key = (rung.NUMBER, rung.NAME, status, explanation)
    found = _CONSTANT.get(key)
    if found is None:
        if len(_CONSTANT) > 10_000:  # explanations quote inputs; keep the cache bounded
            _CONSTANT.clear()
        found = _CONSTANT[key] = RungResult(
            rung.NUMBER, rung.NAME, status, explanation=explanation, triaged=status == "skipped"
        )
    return found


def settle_results(results: Sequence[RungResult], ignored: tuple[int, ...] = ()) -> Verdict:
    """The verdict of a trace from its rung results, in ladder order.

    FAIL when any rung failed: settled at the first failing rung, the dominant failure class over
    every finding. PASS when every rung that ran passed: settled at the highest rung that ran.
    NOT_EVALUATED when no rung could run at all.
    """
    rungs = tuple(results)
    # one pass sorting the results (the fold runs once per distinct trace)
    ran: list[RungResult] = []  # passed, failed or skipped — not triaged
    judged: list[RungResult] = []  # of those, passed or failed
    failing: list[RungResult] = []
    absent: list[str] = []  # the names of the rungs that could not run
    for r in rungs:
        status = r.status
        if status == "not_evaluated":
            absent.append(r.name)
            continue
        if status == "fail":
            failing.append(r)
        if status in _RAN and not r.triaged:
            ran.append(r)
            if status != "skipped":
                judged.append(r)
    judged = judged or ran
    if not ran:
        reasons = "; ".join(f"{r.name}: {r.explanation}" for r in rungs)
        return Verdict(
            VerdictValue.NOT_EVALUATED,
            None,
            None,
            None,
            rungs,
            f"no rung could judge this trace ({reasons})",
            ignored,
        )
    if failing:
        first = failing[0]
        findings = [f for r in rungs for f in r.findings]
        cls = dominant(f.code for f in findings)
        headline = next((f.message for f in findings if f.code == cls), first.explanation)
        text = f"FAIL at rung {first.rung} ({first.name}): {cls or 'failed'}: {headline}"
        return Verdict(VerdictValue.FAIL, cls, first.rung, first.name, rungs, text, ignored)
    top = max(judged, key=_tier)
    note = not_evaluated_note(absent)
    text = _pass_text(judged) + note
    return Verdict(VerdictValue.PASS, None, top.rung, top.name, rungs, text, ignored, note)


_RAN = frozenset({"pass", "fail", "skipped"})


def _tier(result: RungResult) -> int:
    return result.rung


def _pass_text(passed: Sequence[RungResult]) -> str:
    """The most specific statement of a pass: the explanation of the passing rung with a reference
    (call match) when there is one, else of the lowest rung."""
    for result in passed:
        if result.name == call_match.NAME and result.status == "pass":
            return result.explanation
    return passed[0].explanation


def _ladder_from(references: tuple[Any, ...]) -> Ladder:
    return Ladder(tuple(_resolve(r) for r in references))


def _checked(name: str, target: str, rung: Any) -> Rung:
    if getattr(rung, "NAME", None) != name:
        raise UserError(f"rung {name!r} ({target}) calls itself {getattr(rung, 'NAME', None)!r}; "
                        "the names must match")  # fmt: skip
    checked: Rung = rung
    return checked


RUNGS = Kind(
    name="rung",
    group=GROUP,
    builtins={r.NAME: r.__name__ for r in BUILTIN if isinstance(r, ModuleType)},
    check=_checked,
    named_by="--rungs NAMES, or [plugins] rungs in traceladder.toml",
)


def plugin_rungs(names: Sequence[str]) -> tuple[Rung, ...]:
    """The installed plug-in rungs `names` names, in that order. A name that is not installed, a
    built-in's name, a name given twice, or a plug-in that fails to load or calls itself by
    another name is a `UserError` (one line)."""
    rungs: list[Rung] = []
    for name in names:
        if name in RUNGS.builtins:
            raise UserError(f"rung {name!r} is built in and always runs; name only plug-in rungs")
        if name in (r.NAME for r in rungs):
            raise UserError(f"rung {name!r} is named twice")
        rungs.append(load(RUNGS, name))
    return tuple(rungs)


def load_ladder(plugins: Sequence[str] = ()) -> Ladder:
    """The built-in rungs plus the plug-in rungs named in `plugins`, in ladder order. An installed
    plug-in that is not named does not run: installing a package must not change verdicts."""
    return Ladder(BUILTIN).with_rungs(plugin_rungs(plugins))
