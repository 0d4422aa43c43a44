"""Judging one evaluation's survivors: trajectories → cache → calls under a budget → judgments.

Input: the traces every code rung passed (the evaluation layer decides; a failed trace never
arrives here). Each gets its canonical trajectory; identical trajectories under the same judge and
prompt share one judgment — from the cache, or from one call made now. Calls run concurrently,
each a GenAI `chat` span in its own trace linked to the judged trace; the budget (calls or
tokens) is checked before each call, and the traces it leaves unjudged are said so. Everything is
written in one transaction — the judgments paid for are kept even if the evaluation then fails.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import AttributeValue

from traceladder import __version__
from traceladder.conventions.exchanges import exchanges as read_said
from traceladder.evaluators.judge import CriterionVerdict, Judgment
from traceladder.exchange import Exchange
from traceladder.instrumentation import semconv as sc
from traceladder.judge.endpoint import JudgeEndpoint
from traceladder.judge.outcome import JudgeOutcome
from traceladder.judge.prices import Prices
from traceladder.judge.rubric import Prompt, Rubric, build_prompt
from traceladder.judge.trajectory import TrajectoryCall, canonical_text, trajectory, trajectory_hash
from traceladder.storage.db import Store
from traceladder.storage.exchanges import read_exchange_rows
from traceladder.storage.judgments import cached_judgments, save_judge_phase
from traceladder.storage.spans import readable_span_columns, to_arrow

if TYPE_CHECKING:
    from traceladder.judge.client import Reply

JUDGE_SERVICE = "traceladder.judge"


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
    from traceladder.judge.prices import load_prices
    from traceladder.judge.rubric import load_rubric
    from traceladder.judge.sim import SIM_JUDGE, transport

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


class _Collect(SpanExporter):
    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


class _Ask(NamedTuple):
    key: tuple[str, str]
    prompt: Prompt
    text: str
    first_trace: str
    root_span: str | None


def _verdict(criteria: tuple[CriterionVerdict, ...]) -> str:
    return "fail" if any(c.verdict == "fail" for c in criteria) else "pass"


def _criteria_json(criteria: tuple[CriterionVerdict, ...]) -> str:
    return json.dumps([c._asdict() for c in criteria], ensure_ascii=False)


def _criteria_from(text: str, codes: dict[str, str]) -> tuple[CriterionVerdict, ...]:
    return tuple(
        CriterionVerdict(c["criterion"], c["verdict"], c["reason"], codes.get(c["criterion"], c["code"]))
        for c in json.loads(text)
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
    codes = options.rubric.codes
    if exchanges is None:
        exchanges = read_said(read_exchange_rows(store, [s.trace_id for s in survivors], roots=True))
    prompts: dict[str | None, Prompt] = {}
    keyed: dict[str, tuple[tuple[str, str], Prompt, str]] = {}  # trace → (key, prompt, trajectory text)
    for s in survivors:
        ex = exchanges[s.trace_id]
        if not ex.final_answer:
            out.absent[s.trace_id] = "the trace shows no final answer to judge"
            continue
        prompt = prompts.get(s.policy) or prompts.setdefault(s.policy, build_prompt(options.rubric, s.policy))
        t = trajectory(s.instruction or ex.instruction, s.calls, ex.final_answer)
        keyed[s.trace_id] = ((prompt.hash, trajectory_hash(t)), prompt, canonical_text(t))
    cached = cached_judgments(store, model, (k for k, _, _ in keyed.values())) if options.use_cache else {}
    asks: dict[tuple[str, str], _Ask] = {}
    for trace_id, (key, prompt, text) in keyed.items():
        if key not in cached and key not in asks:
            asks[key] = _Ask(key, prompt, text, trace_id, exchanges[trace_id].root_span_id)
    replies, spans = _ask_all(list(asks.values()), options, out)
    now = datetime.now(UTC).replace(tzinfo=None)
    new_judgments, trace_rows = [], []
    for key, (reply, judge_trace) in replies.items():
        if reply.criteria is not None:
            cost = options.prices.cost(model, reply.input_tokens, reply.output_tokens)
            new_judgments.append(
                {
                    "judge_model": model,
                    "prompt_hash": key[0],
                    "trajectory_hash": key[1],
                    "verdict": _verdict(reply.criteria),
                    "criteria": _criteria_json(reply.criteria),
                    "rubric_version": options.rubric.version,
                    "input_tokens": reply.input_tokens,
                    "output_tokens": reply.output_tokens,
                    "cost_usd": cost,
                    "attempts": reply.attempts,
                    "judge_trace_id": judge_trace,
                    "judged_trace_id": asks[key].first_trace,
                    "created_at": now,
                }
            )
    charged: set[tuple[str, str]] = set()
    hits: dict[tuple[str, str], Judgment] = {}
    run_of = {s.trace_id: s.run_id for s in survivors}
    for trace_id, (key, _, _) in keyed.items():
        row: dict[str, Any] = {
            "trace_id": trace_id,
            "run_id": run_of[trace_id],
            "judge_model": model,
            "prompt_hash": key[0],
            "trajectory_hash": key[1],
            "evaluated_at": now,
        }
        if key in cached:
            if key not in hits:  # parsed once per stored judgment, however many traces share it
                hits[key] = Judgment(model, _criteria_from(cached[key], codes), cached=True)
            out.judgments[trace_id] = hits[key]
            out.cache_hits += 1
            trace_rows.append(row | {"outcome": JudgeOutcome.CACHED})
            continue
        answered = replies.get(key)
        if answered is None:
            out.absent[trace_id] = (
                f"the judge budget ({options.budget.describe()}) was spent before this trace"
            )
            out.over_budget += 1
            trace_rows.append(row | {"outcome": JudgeOutcome.OVER_BUDGET})
            continue
        reply, judge_trace = answered
        # The first trace with this trajectory carries the call's cost; the others shared it.
        first = key not in charged
        charged.add(key)
        cost = options.prices.cost(model, reply.input_tokens, reply.output_tokens) if first else 0.0
        usage = {
            "input_tokens": reply.input_tokens if first else 0,
            "output_tokens": reply.output_tokens if first else 0,
            "cost_usd": cost,
            "judge_trace_id": judge_trace,
        }
        if reply.criteria is None:
            out.absent[trace_id] = f"judge error: {reply.error}"
            out.errors += 1
            trace_rows.append(row | usage | {"outcome": JudgeOutcome.ERROR, "error": reply.error})
        else:
            out.judgments[trace_id] = Judgment(model, reply.criteria)
            trace_rows.append(row | usage | {"outcome": JudgeOutcome.JUDGED})
    for trace_id in out.absent.keys() - keyed.keys():
        trace_rows.append(
            {
                "trace_id": trace_id,
                "run_id": run_of[trace_id],
                "judge_model": model,
                "outcome": JudgeOutcome.NO_ANSWER,
                "error": out.absent[trace_id],
                "evaluated_at": now,
            }
        )
    out.cost_usd = _total_cost(options.prices, model, replies)
    table = to_arrow(readable_span_columns(spans, "judge")) if spans else None
    out.judged_traces = [s.trace_id for s in survivors]
    save_judge_phase(store, new_judgments, trace_rows, out.judged_traces, table)
    return out


def _total_cost(prices: Prices, model: str, replies: dict[Any, tuple[Reply, str]]) -> float | None:
    costs = [prices.cost(model, r.input_tokens, r.output_tokens) for r, _ in replies.values()]
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def _ask_all(
    asks: list[_Ask], options: JudgeOptions, out: PhaseResult
) -> tuple[dict[tuple[str, str], tuple[Reply, str]], list[ReadableSpan]]:
    """Ask the judge for each distinct trajectory, concurrently, while the budget lasts."""
    if not asks:
        return {}, []
    collect = _Collect()
    provider = TracerProvider(
        resource=Resource.create({"service.name": JUDGE_SERVICE, "service.version": __version__}),
        shutdown_on_exit=False,
    )
    provider.add_span_processor(SimpleSpanProcessor(collect))
    tracer = provider.get_tracer("traceladder.judge")
    from traceladder.judge.client import JudgeClient  # the OpenAI client library: only when asking

    client = JudgeClient(options.endpoint)
    budget, lock = options.budget, threading.Lock()
    replies: dict[tuple[str, str], tuple[Reply, str]] = {}

    def allowed() -> bool:
        """Reserve one call if the budget has room (a token budget is checked before each call:
        calls already in flight may overrun it by at most `concurrency - 1` calls)."""
        with lock:
            if budget.calls is not None and out.calls >= budget.calls:
                return False
            if budget.tokens is not None and out.input_tokens + out.output_tokens >= budget.tokens:
                return False
            out.calls += 1
            return True

    def one(ask: _Ask) -> None:
        if not allowed():
            return
        links = []
        if ask.root_span:
            context = SpanContext(
                int(ask.first_trace, 16),
                int(ask.root_span, 16),
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
            links.append(Link(context, {sc.JUDGE_LINK: "judged_trace"}))
        attrs: dict[str, AttributeValue] = {
            sc.OPERATION_NAME: "chat",
            sc.PROVIDER_NAME: options.endpoint.provider,
            sc.REQUEST_MODEL: options.endpoint.model,
            sc.REQUEST_TEMPERATURE: 0.0,
            sc.REQUEST_SEED: 0,
            sc.JUDGE_PROMPT_HASH: ask.key[0],
            sc.JUDGE_TRAJECTORY_HASH: ask.key[1],
            sc.JUDGE_JUDGED_TRACE_ID: ask.first_trace,
            sc.JUDGE_RUBRIC_VERSION: options.rubric.version,
        }
        with tracer.start_as_current_span(
            f"chat {options.endpoint.model}", kind=SpanKind.CLIENT, attributes=attrs, links=links
        ) as span:
            reply = client.ask(ask.prompt, ask.text, options.rubric.codes)
            span.set_attribute(sc.USAGE_INPUT_TOKENS, reply.input_tokens)
            span.set_attribute(sc.USAGE_OUTPUT_TOKENS, reply.output_tokens)
            if reply.response_model:
                span.set_attribute(sc.RESPONSE_MODEL, reply.response_model)
            if reply.text is not None:
                message = [{"role": "assistant", "parts": [{"type": "text", "content": reply.text}]}]
                span.set_attribute(sc.OUTPUT_MESSAGES, json.dumps(message, ensure_ascii=False))
            if reply.criteria is None:
                span.set_status(Status(StatusCode.ERROR, reply.error or "judge error"))
                span.set_attribute(sc.ERROR_TYPE, "judge_error")
            else:
                span.set_attribute(sc.JUDGE_VERDICT, _verdict(reply.criteria))
            judge_trace = format(span.get_span_context().trace_id, "032x")
        with lock:
            out.input_tokens += reply.input_tokens
            out.output_tokens += reply.output_tokens
            replies[ask.key] = (reply, judge_trace)

    try:
        with ThreadPoolExecutor(max_workers=max(1, options.concurrency), thread_name_prefix="judge") as pool:
            list(pool.map(one, asks))
    finally:
        client.close()
        provider.shutdown()
    return replies, collect.spans
