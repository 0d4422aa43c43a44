"""The CI gate's decision: pass rate floor and/or maximum drop against a baseline. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from traceladder.errors import ExitCode
from traceladder.evaluate.rungs.types import VERDICTS, VerdictValue
from traceladder.report.build import accuracy_of
from traceladder.report.documents import BaselineV1


@dataclass(frozen=True)
class GateOutcome:
    exit_code: ExitCode  # OK pass, CHECK_FAILED gate failed, USER_ERROR not comparable
    reason: str
    accuracy: float | None
    baseline_accuracy: float | None = None
    regressed: tuple[str, ...] = field(default=())
    verdict_counts: Mapping[str, int] = field(default_factory=dict)


def accuracy(verdict_counts: Mapping[str, int]) -> tuple[float | None, dict[str, int]]:
    """The pass rate of these counts — the report's `accuracy`, PASS / (PASS + FAIL) over every
    judged trace — and the counts with seed 1's four verdicts always present."""
    counts: dict[str, int] = {v: 0 for v in VERDICTS if v != VerdictValue.NOT_EVALUATED}
    for verdict, n in verdict_counts.items():
        counts[verdict] = counts.get(verdict, 0) + n
    return accuracy_of(counts), counts


def decide(
    run_id: str,
    verdict_counts: Mapping[str, int],
    case_verdicts: Iterable[tuple[str | None, str]] = (),
    *,
    min_pass_rate: float | None = None,
    baseline: BaselineV1 | None = None,
    max_drop: float = 0.0,
    incomparable: list[str] | None = None,
) -> GateOutcome:
    """`verdict_counts`: verdict → judged traces of the run (the pass rate's only input);
    `case_verdicts`: (case id, verdict) of each of them, for the cases that regressed against the
    baseline (a case regressed when the baseline passed it and any repeat of it now does not)."""
    acc, counts = accuracy(verdict_counts)
    if incomparable:
        reason = f"run {run_id} is not comparable with the baseline: different {', '.join(incomparable)}"
        return GateOutcome(ExitCode.USER_ERROR, reason, acc, verdict_counts=counts)
    if acc is None:
        reason = f"gate failed: run {run_id} has no scored cases (all SKIP or AGENT_ERROR)"
        return GateOutcome(ExitCode.CHECK_FAILED, reason, acc, verdict_counts=counts)
    failures = []
    base_acc = None
    regressed: tuple[str, ...] = ()
    if min_pass_rate is not None and acc < min_pass_rate:
        failures.append(f"pass rate {acc:.1%} is below the minimum {min_pass_rate:.1%}")
    if baseline is not None:
        # exact, from the counts: the stored accuracy is rounded for display
        base_acc = accuracy_of(baseline["summary"]["verdict_counts"]) or 0.0
        not_passing = {case_id for case_id, verdict in case_verdicts if verdict != VerdictValue.PASS}
        regressed = tuple(
            sorted(
                case_id
                for case_id, b in baseline.get("cases", {}).items()
                if b["verdict"] == VerdictValue.PASS and case_id in not_passing
            )
        )
        drop = base_acc - acc
        if drop > max_drop + 1e-12:
            shown = ", ".join(regressed[:10]) + (" …" if len(regressed) > 10 else "")
            failures.append(
                f"pass rate {acc:.1%} dropped {drop:.1%} from the baseline's {base_acc:.1%} "
                f"(allowed {max_drop:.1%}); regressed: {shown or 'none'}"
            )
    if failures:
        return GateOutcome(
            ExitCode.CHECK_FAILED,
            f"gate failed for {run_id}: " + "; ".join(failures),
            acc,
            base_acc,
            regressed,
            counts,
        )
    parts = [f"pass rate {acc:.1%}"]
    if min_pass_rate is not None:
        parts.append(f"minimum {min_pass_rate:.1%}")
    if base_acc is not None:
        parts.append(f"baseline {base_acc:.1%}, allowed drop {max_drop:.1%}")
    return GateOutcome(
        ExitCode.OK, f"gate passed for {run_id}: " + ", ".join(parts), acc, base_acc, regressed, counts
    )


def markdown_summary(outcome: GateOutcome, run_id: str) -> str:
    """For $GITHUB_STEP_SUMMARY."""
    icon = {ExitCode.OK: "✅", ExitCode.CHECK_FAILED: "❌", ExitCode.USER_ERROR: "⚠️"}[outcome.exit_code]
    lines = [
        f"## {icon} traceladder gate — {run_id}",
        "",
        outcome.reason,
        "",
        "| metric | value |",
        "|---|---|",
        f"| pass rate | {'—' if outcome.accuracy is None else f'{outcome.accuracy:.1%}'} |",
    ]
    if outcome.baseline_accuracy is not None:
        lines.append(f"| baseline pass rate | {outcome.baseline_accuracy:.1%} |")
    for verdict, n in outcome.verdict_counts.items():
        lines.append(f"| {verdict} | {n} |")
    if outcome.regressed:
        lines += [
            "",
            "Regressed cases (PASS in the baseline): " + ", ".join(f"`{c}`" for c in outcome.regressed),
        ]
    return "\n".join(lines) + "\n"


GATE_WORDS = {0: "passed", 1: "failed", 2: "not_comparable"}


def step_outputs(outcome: GateOutcome, run_id: str) -> str:
    """For $GITHUB_OUTPUT (`name=value` lines): the run, its pass rate, and the gate's word for
    its exit code — what a later workflow step or the composite action's outputs read."""
    rate = "" if outcome.accuracy is None else f"{outcome.accuracy:.4f}"
    run_id = "_".join(run_id.split())  # one line per output, whatever a run id holds
    return f"run_id={run_id}\npass_rate={rate}\ngate={GATE_WORDS[outcome.exit_code]}\n"
