"""Traces already tagged with case ids become a run: `runs add --where PREDICATE`.

The live path (docs/live.md: an agent tags its root span with `traceladder.case.id`, sends its
traces, `evaluate` judges them) gives verdicts no run holds, so `gate`, `compare` and `baseline`
had nothing to read. `add_trace_run(store, TraceRunRequest)` selects the tagged traces a SQL
predicate over the `traces` table names, records them as a complete run of the domain's suite
(one case run per trace; a case's traces are its repeats, oldest first) and judges it. Its
subject is `traces:SERVICE` (or `--subject`), its version the traces' `service.version` (or
`--agent-version`): a run like an agent's, so the gate and `compare` treat it the same way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from traceladder.errors import UserError
from traceladder.evaluate import evaluate_store
from traceladder.evaluate.judge.phase import JudgeOptions
from traceladder.evaluate.passes import EvaluationSummary
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.produce.agent.run_record import new_run_id, run_selection
from traceladder.produce.subject.spec import UNVERSIONED
from traceladder.store.db import Store
from traceladder.store.runs import NewRun, create_run, mark_finished
from traceladder.store.trace_runs import TaggedTrace, TraceCaseRun, add_case_runs, tagged_traces
from traceladder.suite.cases.hashes import input_hashes
from traceladder.suite.cases.loader import suite_path
from traceladder.suite.cases.validator import read_valid_suite
from traceladder.suite.domain.registry import load_domain

AGENT_VERSION_KEY = "agent_version"
_SOURCE_CONFIG = {"source": "traces"}  # what binds such runs to each other (no knobs of ours ran)


@dataclass(frozen=True)
class TraceRunRequest:
    where: str
    domain: str
    cases_path: Path | None = None
    subject: str | None = None
    version: str | None = None
    ladder: Ladder | None = None
    judge: JudgeOptions | None = None


@dataclass(frozen=True)
class TraceRunResult:
    run_id: str
    subject: str
    version: str
    traces: int
    cases: int
    evaluation: EvaluationSummary


def add_trace_run(store: Store, request: TraceRunRequest) -> TraceRunResult:
    """Record and judge the run; `UserError` (nothing written) when the predicate selects no
    tagged trace, a trace already belongs to a run, a case id is not in the suite, or the traces
    come from several versions and none was given."""
    domain = load_domain(request.domain)
    suite = read_valid_suite(suite_path(domain, request.cases_path), domain)
    found = tagged_traces(store, request.where)
    if not found:
        raise UserError(
            f"--where {request.where!r} selects no trace tagged with traceladder.case.id; see "
            "`traceladder sql 'SELECT trace_id, service, service_version FROM traces'`"
        )
    taken = next((t for t in found if t.in_run), None)
    if taken is not None:
        raise UserError(f"trace {taken.trace_id} already belongs to run {taken.in_run}; narrow --where")
    dimension = {c.id: c.dimension for c in suite.cases}
    unknown = sorted({t.case_id for t in found} - dimension.keys())
    if unknown:
        raise UserError(
            f"case id(s) {', '.join(unknown[:5])} are not in the suite {suite.path}; give --domain/--cases "
            "of the suite the traces ran"
        )
    versions = sorted({t.service_version for t in found if t.service_version})
    if request.version is None and len(versions) > 1:
        raise UserError(
            f"the traces come from {len(versions)} versions ({', '.join(versions[:5])}); narrow --where "
            "to one, or name it with --agent-version"
        )
    version = request.version or (versions[0] if versions else UNVERSIONED)
    subject = request.subject or _subject(found)
    repeats: Counter[str] = Counter()
    case_runs = []
    for t in found:
        case_runs.append(TraceCaseRun(
            t.case_id, repeats[t.case_id], t.trace_id, dimension[t.case_id], "error" if t.error else "ok",
            t.error_type, t.duration_ns / 1e6 if t.duration_ns is not None else None,
        ))  # fmt: skip
        repeats[t.case_id] += 1
    hashes = {**input_hashes(suite.data, domain, _SOURCE_CONFIG), AGENT_VERSION_KEY: version}
    run_id = new_run_id()
    selection = run_selection(sorted(repeats), max(repeats.values()), domain)
    config = {**_SOURCE_CONFIG, "where": request.where, "agent_version": version}
    create_run(
        store,
        NewRun(
            run_id,
            suite.path.name,
            domain.name,
            subject,
            "traces",
            None,
            config,
            hashes,
            selection,
            len(found),
        ),
    )
    add_case_runs(store, run_id, case_runs)
    mark_finished(store, run_id, "complete")
    evaluation = evaluate_store(
        store, run_id=run_id, domain=domain.name, cases_path=request.cases_path, cases=suite.cases,
        ladder=request.ladder, judge=request.judge,
    )  # fmt: skip
    return TraceRunResult(run_id, subject, version, len(found), len(repeats), evaluation)


def _subject(found: list[TaggedTrace]) -> str:
    services = sorted({t.service for t in found if t.service})
    return f"traces:{services[0]}" if len(services) == 1 else "traces"
