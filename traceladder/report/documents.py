"""The documents traceladder writes, as types mypy checks: ReportV1, BaselineV1 and ComparisonV1.

The published JSON Schemas (`traceladder/schemas/*.schema.json`) stay the contract: these
TypedDicts restate their keys so a builder that forgets, misspells or renames a key, or a renderer
that reads one the document does not have, fails `make check` instead of a user's report.
`tests/reporting/test_document_types.py` holds each TypedDict to its schema object (the same keys,
the same required ones), so neither side can change alone. ComparisonV1 has no published schema;
its test holds the TypedDict to what `compare_sides` builds.

Values a schema leaves open (a tool's arguments, a run's configuration) are `Any`: they are the
user's JSON, not ours. The gate's decision is a dataclass (`report.gate.GateOutcome`), never
written as a document.
"""

# No `from __future__ import annotations` here: TypedDict reads `NotRequired` from evaluated
# annotations (Python 3.11), and the schema test reads which keys are required at run time.
from typing import Any, Literal, NotRequired, TypedDict

from traceladder.evaluate.rungs.types import RungStatus

# ---- ReportV1 (report-v1.schema.json) ---------------------------------------------------------


class InputHashes(TypedDict):
    """SHA-256 of each input of a run, and `inputs`: of the six together."""

    cases: str
    tool_schemas: str
    fixtures: str
    policy: str
    system_prompt: str
    run_config: str
    inputs: str
    agent_version: NotRequired[str]  # an agent under test's runs only; not part of `inputs`


class RunBlock(TypedDict):
    """ReportV1's `run`: every key always present, null when unknown (traces from elsewhere)."""

    run_id: str
    suite: str | None
    domain: str | None
    model: str | None
    provider: str | None
    base_url_host: str | None
    config: dict[str, Any] | None
    input_hashes: InputHashes | None
    selection: dict[str, Any] | None
    cases_total: int | None
    started_at: str | None
    finished_at: str | None
    status: str
    evaluator_version: str


# Verdict → traces: seed 1's four verdicts always, NOT_EVALUATED only when some trace had it. A
# plain dict rather than a TypedDict, because every count reader (accuracy, gate, trend) takes a
# `Mapping[str, int]`, which a TypedDict is not; its keys are `VerdictValue`'s, and the schema test
# holds the schema's verdict_counts objects to that enum.
VerdictCounts = dict[str, int]


class Block(TypedDict):
    """The counts of some traces: the whole run's, or one dimension's."""

    case_count: int
    verdict_counts: VerdictCounts
    scored_count: int
    accuracy: float | None


class TopFailure(TypedDict):
    failure_class: str | None
    count: int
    cases: list[str]


class WorstTool(TypedDict):
    tool: str
    fail_cases: int


class LadderRow(TypedDict):
    """One rung of the summary's `ladder`: how many traces it judged (per status) and settled."""

    rung: int
    name: str
    statuses: dict[str, int]
    settled_fail: int
    settled_pass: int


class JudgeBlock(TypedDict):
    """Rung 5 in numbers (the summary's `judge`)."""

    model: str | None
    survivors: int
    judged_pass: int
    judged_fail: int
    judge_calls: int
    cache_hits: int
    errors: int
    over_budget: int
    no_answer: int
    avoided_by_ladder: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class ConversationBlock(TypedDict):
    conversation_count: int
    verdict_counts: VerdictCounts
    scored_count: int
    accuracy: float | None


class Summary(TypedDict):
    """ReportV1's `summary`: the run's block plus per dimension, failure class, tool and rung."""

    case_count: int
    verdict_counts: VerdictCounts
    scored_count: int
    accuracy: float | None
    dimensions: dict[str, Block]
    conversations: NotRequired[ConversationBlock]
    dimension_names: NotRequired[dict[str, str]]
    taxonomy_counts: dict[str | None, int]  # a FAIL no finding classed is counted under null
    top_failures: list[TopFailure]
    worst_tools: dict[str, int]
    top_worst_tools: list[WorstTool]
    mean_rung_scores: dict[str, float]
    settled_at_counts: dict[str, int]  # the tier, as its decimal string
    ladder: list[LadderRow]
    judge: NotRequired[JudgeBlock]


class GoldenCall(TypedDict):
    tool: str
    params: dict[str, Any]
    param_rules: NotRequired[dict[str, str]]


class ActualCall(TypedDict):
    ordinal: int
    tool: str
    arguments_raw: str | None
    arguments: Any  # the parsed JSON the model sent (None when it did not parse)
    status: str
    error_type: str | None


class ArgumentDiff(TypedDict):
    param: str
    expected: Any
    actual: Any
    rule: str
    code: str | None


class Check(TypedDict):
    """One row of a rung's evidence; open in the schema (a rung plug-in may add keys)."""

    status: str
    expected_tool: str | None
    actual_tool: str | None
    actual_ordinal: int | None
    code: str | None
    message: str
    diffs: list[ArgumentDiff]


class DiffEntry(Check):
    """A check of a failing rung that records a difference, with its rung."""

    rung: int
    rung_name: str


class FindingEntry(TypedDict):
    rung: int
    code: str
    tool: str | None
    param: str | None
    expected: Any
    actual: Any
    message: str


class RungEntry(TypedDict):
    rung: int
    name: str
    status: RungStatus
    scores: dict[str, float | None]
    explanation: str | None
    checks: NotRequired[list[Check]]


class IgnoredRead(TypedDict):
    kind: Literal["ignored_read"]
    message: str
    ordinal: int
    tool: str


class ServerQuirk(TypedDict):
    kind: Literal["server_quirk"]
    message: str
    quirk: str
    count: int
    steps: list[int]


class RetriedRequest(TypedDict):
    kind: Literal["retried_request"]
    message: str
    step: int
    retries: int
    errors: list[str]
    succeeded: bool


WarningEntry = IgnoredRead | ServerQuirk | RetriedRequest


class Result(TypedDict):
    """One trace's verdict and its evidence (ReportV1's `results` item)."""

    case_id: str | None
    repeat_index: int
    turn: NotRequired[int]  # a turn of a multi-turn case only
    dimension: str | None
    trace_id: str
    verdict: str  # a VerdictValue (the schema's enum); read back from the store or JSON as str
    taxonomy: str | None
    settled_at: int | None
    settled_by: str | None
    explanation: str | None
    reason: NotRequired[str | None]  # the explanation without the note; absent in older reports
    golden: list[GoldenCall]
    actual: list[ActualCall]
    warnings: list[WarningEntry]
    diff: list[DiffEntry]
    findings: list[FindingEntry]
    rungs: list[RungEntry]


class ConversationFinding(TypedDict):
    turn: int | None
    finding_class: str
    message: str
    rule: str | None


class ConversationTurn(TypedDict):
    turn: int
    trace_id: str
    verdict: str  # a VerdictValue (the schema's enum); read back from the store or JSON as str
    user_message: str | None
    calls: list[ActualCall]


class Conversation(TypedDict):
    conversation_id: str
    case_id: str | None
    repeat_index: int | None
    linked_by: str
    verdict: str  # a VerdictValue (the schema's enum); read back from the store or JSON as str
    deciding_turn: int | None
    reason: str
    findings: list[ConversationFinding]
    turns: list[ConversationTurn]


class ReportV1(TypedDict):
    """One run's report: what `report --format json` writes and every renderer reads."""

    schema: Literal["ReportV1"]
    run: RunBlock
    summary: Summary
    results: list[Result]
    conversations: NotRequired[list[Conversation]]


# ---- BaselineV1 (baseline-v1.schema.json) -----------------------------------------------------


class BaselineSummary(TypedDict):
    """The canonical report's summary, each dimension reduced to its accuracy."""

    case_count: int
    verdict_counts: VerdictCounts
    scored_count: int
    accuracy: float | None
    dimensions: dict[str, float | None]
    taxonomy_counts: dict[str, int]


class BaselineConsistency(TypedDict):
    mean_agreement: float | None
    flaky_cases: list[str]
    pass_hat_k: dict[str, float]
    pass_at_k: dict[str, float]


class BaselineReview(TypedDict):
    fails: int
    model_error: int
    judge_error: int
    golden_error: int


class BaselineCase(TypedDict):
    verdict: str  # a VerdictValue (the schema's enum); read back from the store or JSON as str
    failure_class: str | None


class BaselineV1(TypedDict):
    """A locked baseline: the canonical run's report bound to its model, inputs and review."""

    schema: Literal["BaselineV1"]
    locked_at: str
    run_id: str
    model: str
    provider: str | None
    base_url_host: str | None
    config: dict[str, Any]
    input_hashes: InputHashes
    evaluator_version: str
    runs: list[str]
    summary: BaselineSummary
    consistency: BaselineConsistency
    review: BaselineReview
    cases: dict[str, BaselineCase]
    report_sha256: str
    baseline_sha256: str


# ---- ComparisonV1 (no published schema; docs/report-contract.md) ------------------------------


class SideRate(TypedDict):
    passed: int
    scored: int
    rate: float | None
    interval: list[float]


class ComparisonSide(SideRate):
    """One side of a comparison: its runs, its model and its pass rate over the paired cases."""

    runs: list[str]
    model: str | None
    agent_version: NotRequired[str]  # an agent under test's runs only
    trials_per_case: list[int]


class McNemarBlock(TypedDict):
    both_pass: int
    b: int
    c: int
    both_fail: int
    pairs: int
    p_value: float
    alpha: float
    significant: bool
    b_worse: bool
    conclusion: str


class DimensionRow(TypedDict):
    dimension: str
    title: str | None
    a: SideRate
    b: SideRate
    delta: float | None
    cases: int
    regressed: int
    improved: int


class ClassRow(TypedDict):
    failure_class: str
    a: int
    b: int
    delta: int


class FlipEvidence(TypedDict):
    """Why a side failed a flipped case, told by its failing trial."""

    trace_id: str
    repeat_index: int
    verdict: str  # a VerdictValue (the schema's enum); read back from the store or JSON as str
    failure_class: str | None
    explanation: str | None
    finding: dict[str, Any] | None


class Flip(TypedDict):
    case_id: str
    dimension: str | None
    k: int
    direction: Literal["regressed", "improved"]
    a: str  # PASS or FAIL: the case's paired outcome on each side
    b: str
    a_verdicts: list[str]
    b_verdicts: list[str]
    evidence: NotRequired[FlipEvidence]  # added when the flips' evidence is read, at the end


class ComparisonV1(TypedDict):
    """Side A (the reference) against side B (the candidate) on the cases both tried."""

    schema: Literal["ComparisonV1"]
    a: ComparisonSide
    b: ComparisonSide
    k: list[int]
    differs: list[str]
    paired_cases: int
    only_a: list[str]
    only_b: list[str]
    unpaired: list[str]
    mcnemar: McNemarBlock
    dimensions: list[DimensionRow]
    classes: list[ClassRow]
    flips: list[Flip]
