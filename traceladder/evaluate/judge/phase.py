"""Judging one evaluation's survivors: trajectories → cache → calls under a budget → judgments.

Input: the traces every code rung passed (the evaluation layer decides; a failed trace never
arrives here). Each gets its canonical trajectory; identical trajectories under the same judge and
prompt share one judgment — from the cache, or from one call made now. Calls run concurrently,
each a GenAI `chat` span in its own trace linked to the judged trace; the budget (calls or
tokens) is checked before each call, and the traces it leaves unjudged are said so. Everything is
written in one transaction — the judgments paid for are kept even if the evaluation then fails.

`judge_survivors` puts the concerns together: the trajectories and their keys (here), the cache
(`store.judgments`), the calls under the budget (`evaluate.judge.asking`), the rows of the two tables
and their cost (`evaluate.judge.phase_rows`), the one write (`store.judgments.save_judge_phase`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import NamedTuple

from traceladder.evaluate.judge.asking import Ask, ask_all
from traceladder.evaluate.judge.endpoint import JudgeEndpoint
from traceladder.evaluate.judge.phase_rows import Key, judgment_rows, total_cost, trace_rows
from traceladder.evaluate.judge.prices import Prices, load_prices
from traceladder.evaluate.judge.rubric import Prompt, Rubric, build_prompt, load_rubric
from traceladder.evaluate.judge.trajectory import TrajectoryCall, canonical_text, trajectory, trajectory_hash
from traceladder.evaluate.rungs.judge import Judgment
from traceladder.exchange import Exchange
from traceladder.extract.conventions.exchanges import exchanges as read_said
from traceladder.store.db import Store
from traceladder.store.exchanges import read_exchange_rows
from traceladder.store.judgments import cached_judgments, save_judge_phase
from traceladder.store.spans import readable_span_columns, to_arrow


@dataclass(frozen=True)
class JudgeBudget:
    calls: int | None = None
    tokens: int | None = None

    def describe(self) -> str:
        return f"{self.calls} calls" if self.calls is not None else f"{self.tokens} tokens"


@dataclass(frozen=True)
class JudgeOptions:
    endpoint: JudgeEndpoint
    rubric: Rubric
    prices: Prices
    budget: JudgeBudget = JudgeBudget()
    use_cache: bool = True
    concurrency: int = 4

    @property
    def tag(self) -> str:
        """Which judge and rubric decide rung 5, for the evaluator version results record."""
        return f"+judge:{self.endpoint.model}@{self.rubric.hash[:12]}"


def sim_judge_options() -> JudgeOptions:
    """The simulated judge with the shipped rubric and prices (selfcheck, tests)."""
    from traceladder.evaluate.judge.sim import SIM_JUDGE, transport

    return JudgeOptions(JudgeEndpoint(SIM_JUDGE, transport=transport()), load_rubric(), load_prices())


class Survivor(NamedTuple):
    trace_id: str
    run_id: str | None
    instruction: str | None  # the case's, when the trace has one
    policy: str | None  # the domain's policy text
    calls: tuple[TrajectoryCall, ...]


@dataclass
class PhaseResult:
    judgments: dict[str, Judgment] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)  # trace → why rung 5 did not run
    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    over_budget: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    judged_traces: list[str] = field(default_factory=list)  # every survivor (its row was written)

    def line(self) -> str:
        """What the phase did, as `key=value` words (the CLI's stderr line)."""
        cost = "unknown" if self.cost_usd is None else f"{self.cost_usd:.4f}"
        return (
            f"judge: calls={self.calls} cache_hits={self.cache_hits} errors={self.errors} "
            f"over_budget={self.over_budget} tokens={self.input_tokens + self.output_tokens} cost_usd={cost}"
        )


def judge_survivors(
    store: Store,
    survivors: Sequence[Survivor],
    options: JudgeOptions,
    exchanges: Mapping[str, Exchange] | None = None,
) -> PhaseResult:
    """Judge `survivors`; the cache is read from and everything written to `store`. `exchanges`
    (instruction, final answer, root span per trace) are read from `store` unless given — a
    sharded evaluation reads them where the spans are, not where the results go."""
    out = PhaseResult()
    model = options.endpoint.model
    if exchanges is None:
        exchanges = read_said(read_exchange_rows(store, [s.trace_id for s in survivors], roots=True))
    keyed = _trajectories(survivors, exchanges, options.rubric, out)
    keys = {trace_id: key for trace_id, (key, _, _) in keyed.items()}
    cached = cached_judgments(store, model, keys.values()) if options.use_cache else {}
    asks = _asks(keyed, cached, exchanges)
    replies, spans = ask_all(list(asks.values()), options, out)
    now = datetime.now(UTC).replace(tzinfo=None)
    new_judgments = judgment_rows(replies, asks, model, options.rubric.version, options.prices, now)
    run_of = {s.trace_id: s.run_id for s in survivors}
    rows = trace_rows(keys, cached, replies, run_of, options, out, now)
    out.cost_usd = total_cost(options.prices, model, replies)
    table = to_arrow(readable_span_columns(spans, "judge")) if spans else None
    out.judged_traces = [s.trace_id for s in survivors]
    save_judge_phase(store, new_judgments, rows, out.judged_traces, table)
    return out


_Keyed = dict[str, tuple[Key, Prompt, str]]  # trace → (key, prompt, trajectory text)


def _trajectories(
    survivors: Sequence[Survivor], exchanges: Mapping[str, Exchange], rubric: Rubric, out: PhaseResult
) -> _Keyed:
    """Each survivor's canonical trajectory, its prompt (one per policy text) and cache key; a
    trace with no final answer has nothing to judge (said in `out.absent`)."""
    prompts: dict[str | None, Prompt] = {}
    keyed: _Keyed = {}
    for s in survivors:
        ex = exchanges[s.trace_id]
        if not ex.final_answer:
            out.absent[s.trace_id] = "the trace shows no final answer to judge"
            continue
        prompt = prompts.get(s.policy) or prompts.setdefault(s.policy, build_prompt(rubric, s.policy))
        t = trajectory(s.instruction or ex.instruction, s.calls, ex.final_answer)
        keyed[s.trace_id] = ((prompt.hash, trajectory_hash(t)), prompt, canonical_text(t))
    return keyed


def _asks(keyed: _Keyed, cached: Mapping[Key, str], exchanges: Mapping[str, Exchange]) -> dict[Key, Ask]:
    """One call per distinct trajectory the cache does not hold, linked to its first trace."""
    asks: dict[Key, Ask] = {}
    for trace_id, (key, prompt, text) in keyed.items():
        if key not in cached and key not in asks:
            asks[key] = Ask(key, prompt, text, trace_id, exchanges[trace_id].root_span_id)
    return asks
