"""The `runs` table: the suite runner's writes (a run started, resumed, finished) and the reads of
runs and their verdicts for the workflows (consistency, baselines, the gate). The only module that
holds SQL on `runs` and `case_runs`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from traceladder.errors import UserError
from traceladder.store.case_level import case_level
from traceladder.store.db import Store


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    model: str
    provider: str | None
    base_url_host: str | None
    config: dict[str, Any]
    input_hashes: dict[str, str]
    status: str
    cases_total: int
    started_at: str | None
    selection: dict[str, Any]
    finished: int  # case runs recorded
    evaluated: int  # case runs with a result (a multi-turn case run is one, however many turns)
    domain: str | None = None

    @property
    def complete(self) -> bool:
        """Every selected case ran and was judged: the only evidence a gate or baseline accepts."""
        return self.status == "complete" and self.finished == self.cases_total == self.evaluated

    def incompleteness(self) -> str:
        """Why the run is not complete, in words (empty when it is)."""
        if self.status != "complete" or self.finished < self.cases_total:
            return (
                f"run {self.run_id} is {self.status} with {self.finished} of {self.cases_total} case runs; "
                f"finish it with `traceladder run --resume {self.run_id}`"
            )
        if self.evaluated < self.finished:
            return (
                f"run {self.run_id} has results for {self.evaluated} of {self.finished} case runs; "
                f"run `traceladder evaluate --run {self.run_id}`"
            )
        return ""


@dataclass(frozen=True)
class NewRun:
    """What a run records when it starts (every JSON field already a mapping)."""

    run_id: str
    suite: str
    domain: str
    model: str
    provider: str
    base_url_host: str | None
    config: dict[str, Any]
    input_hashes: dict[str, str]
    selection: dict[str, Any]
    cases_total: int


def create_run(store: Store, run: NewRun) -> None:
    """Record a run that starts now, as `running`."""
    store.execute(
        "INSERT INTO runs (run_id, suite, domain, model, provider, base_url_host, config, input_hashes,"
        " selection, cases_total, started_at, status)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running')",
        [
            run.run_id, run.suite, run.domain, run.model, run.provider, run.base_url_host,
            json.dumps(run.config), json.dumps(run.input_hashes), json.dumps(run.selection),
            run.cases_total, _now(),
        ],
    )  # fmt: skip


@dataclass(frozen=True)
class PlayedTurn:
    """What one played turn of a multi-turn case left (`case_turns`)."""

    turn: int
    trace_id: str | None
    agent_status: str
    error_type: str | None
    error_message: str | None
    steps: int
    final_text: str | None
    latency_ms: float
    input_tokens: int
    output_tokens: int


def record_case_run(store: Store, row: Sequence[Any], turns: Sequence[PlayedTurn] = ()) -> None:
    """A finished case run: its `case_runs` row (the 15 columns in order) and, for a multi-turn
    case, its turns (`case_turns`, replacing an earlier attempt's: a resumed case is played again
    from its first turn), in one transaction — a case is done with all its turns or not at all."""
    run_id, case_id, repeat_index = row[0], row[1], row[2]
    with store.transaction() as conn:
        conn.execute(
            "DELETE FROM case_turns WHERE run_id = ? AND case_id = ? AND repeat_index = ?",
            [run_id, case_id, repeat_index],
        )
        if turns:
            conn.executemany(
                "INSERT INTO case_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    [
                        run_id, case_id, repeat_index, t.turn, t.trace_id or None, t.agent_status,
                        t.error_type, t.error_message, t.steps, t.final_text, t.latency_ms, t.input_tokens,
                        t.output_tokens,
                    ]
                    for t in turns
                ],
            )  # fmt: skip
        conn.execute(
            "INSERT OR REPLACE INTO case_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row
        )


def case_run_statuses(store: Store, run_id: str) -> dict[tuple[str, int], str]:
    """(case id, repeat index) → agent status of every case run a run has recorded: what a resumed
    run does not run again."""
    rows = store.fetchall(
        "SELECT case_id, repeat_index, agent_status FROM case_runs WHERE run_id = ?", [run_id]
    )
    return {(r[0], r[1]): r[2] for r in rows}


def commonest_error(store: Store, run_id: str) -> tuple[str | None, int] | None:
    """The error type most of a run's case runs ended with and how many did (ties: the first by
    name), or None when none recorded an error."""
    rows = store.fetchall(
        "SELECT error_type, count(*) AS n FROM case_runs WHERE run_id = ?"
        " GROUP BY 1 ORDER BY n DESC, 1 LIMIT 1",
        [run_id],
    )
    return (rows[0][0], rows[0][1]) if rows else None


def mark_running(store: Store, run_id: str) -> None:
    """A resumed run is running again."""
    store.execute("UPDATE runs SET status = 'running' WHERE run_id = ?", [run_id])


def mark_finished(store: Store, run_id: str, status: str) -> None:
    """A run stopped (complete, interrupted, failed): its status and when."""
    store.execute("UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?", [status, _now(), run_id])


def recorded_config(store: Store, run_id: str) -> tuple[dict[str, Any], str | None] | None:
    """The configuration a run recorded and its domain, or None for no such run."""
    rows = store.fetchall("SELECT config, domain FROM runs WHERE run_id = ?", [run_id])
    return (json.loads(rows[0][0]), rows[0][1]) if rows else None


def resume_facts(store: Store, run_id: str) -> tuple[str, dict[str, str], dict[str, Any], str] | None:
    """(model, input hashes, selection, status) of a run, or None for no such run."""
    rows = store.fetchall(
        "SELECT model, input_hashes, selection, status FROM runs WHERE run_id = ?", [run_id]
    )
    if not rows:
        return None
    model, hashes, selection, status = rows[0]
    return model, json.loads(hashes), json.loads(selection), status


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)  # stored as a naive UTC timestamp


def run_info(store: Store, run_id: str) -> RunInfo:
    # The counts are uncorrelated subqueries on the parameter: a correlated one costs DuckDB ~10 ms
    # more to plan, and every command that reads a run pays it at start-up (measured).
    rows = store.fetchall(
        "SELECT run_id, model, provider, base_url_host, config, input_hashes, status, cases_total,"
        " started_at, selection,"
        " (SELECT count(*) FROM case_runs WHERE run_id = $1),"
        " (SELECT count(DISTINCT (case_id, repeat_index)) FROM trace_results WHERE run_id = $1), domain"
        " FROM runs WHERE run_id = $1",
        [run_id],
    )
    if not rows:
        raise UserError(
            f"no run {run_id} in {store.path}; list runs with `traceladder sql 'SELECT * FROM runs'`"
        )
    r = rows[0]
    return RunInfo(
        r[0], r[1], r[2], r[3], json.loads(r[4] or "{}"), json.loads(r[5] or "{}"), r[6], r[7] or 0,
        r[8].isoformat() if r[8] else None, json.loads(r[9] or "{}"), r[10], r[11], r[12],
    )  # fmt: skip


def verdicts(store: Store, run_id: str) -> dict[tuple[str, int], tuple[str, str | None]]:
    """(case id, repeat) → (verdict, failure class) for an evaluated run. A multi-turn case run is
    its conversation: the conversation's verdict (`conversation_results`, which folds its turns)
    and the failure class of the turn that decided it — never one of its turns' verdicts picked
    at random."""
    rows = store.fetchall(_CASE_VERDICTS, [run_id])
    if not rows:
        raise UserError(f"run {run_id} has no results; run `traceladder evaluate --run {run_id}` first")
    out: dict[tuple[str, int], tuple[str, str | None]] = {}
    for case_id, repeat, verdict, failure_class, turn, conversation, deciding in rows:
        if conversation is None:
            out[(case_id, repeat)] = (verdict, failure_class)
        elif turn == deciding or (case_id, repeat) not in out:
            out[(case_id, repeat)] = (conversation, failure_class if turn == deciding else None)
    return out


# Each judged trace of a run, with — for a turn of a multi-turn case — its turn, its
# conversation's verdict and the turn that decided it; a turn's failure class, else the class of
# the conversation finding raised at it (a goal case's GOAL_NOT_MET, an UNCONFIRMED_ACTION).
_CASE_VERDICTS = """
SELECT r.case_id, r.repeat_index, r.verdict,
       coalesce(r.failure_class, (SELECT min(f.finding_class) FROM conversation_findings f
                                  WHERE f.conversation_id = c.conversation_id AND f.turn = cv.deciding_turn)),
       ct.turn, cv.verdict, cv.deciding_turn
FROM trace_results r
LEFT JOIN case_turns ct ON ct.trace_id = r.trace_id
LEFT JOIN conversations c ON c.trace_id = ct.trace_id
LEFT JOIN conversation_results cv ON cv.conversation_id = c.conversation_id
WHERE r.run_id = ?
ORDER BY r.case_id, r.repeat_index, ct.turn NULLS FIRST
"""


def case_verdicts(store: Store, run_id: str) -> list[tuple[str | None, str]]:
    """(case id, verdict) of every case run of `run_id` as the report counts it
    (`store.case_level`): repeats and traces that share a case each count; the turns of a
    multi-turn case run are one, with its conversation's verdict."""
    of_run = case_level("(SELECT * FROM trace_results WHERE run_id = $run)")
    return [(c, v) for c, v in store.fetchall(f"SELECT case_id, verdict FROM ({of_run})", {"run": run_id})]


def failures_of(store: Store, run_id: str) -> list[tuple[str, int, str | None, str]]:
    """(case id, repeat, failure class, explanation) of every FAIL of a run, in case order."""
    return [
        (r[0], r[1], r[2], r[3])
        for r in store.fetchall(
            "SELECT case_id, repeat_index, failure_class, explanation FROM trace_results "
            "WHERE run_id = ? AND verdict = 'FAIL' ORDER BY case_id, repeat_index",
            [run_id],
        )
    ]


def has_results(store: Store, run_id: str) -> bool:
    return bool(store.fetchall("SELECT 1 FROM trace_results WHERE run_id = ? LIMIT 1", [run_id]))


def labelled_verdicts(
    store: Store, run_ids: Sequence[str]
) -> list[tuple[str, str, str, str, str | None, str]]:
    """(run, case, the simulator's label JSON, verdict, failure class, explanation) per judged case
    run of these runs — what `selfcheck` compares."""
    return [
        (r[0], r[1], r[2], r[3], r[4], r[5])
        for r in store.fetchall(
            "SELECT r.run_id, r.case_id, cr.expected_label, r.verdict, r.failure_class, r.explanation "
            "FROM trace_results r JOIN case_runs cr USING (trace_id) WHERE r.run_id IN (SELECT unnest(?)) "
            "ORDER BY r.run_id, r.case_id",
            [list(run_ids)],
        )
    ]


@dataclass(frozen=True)
class RunUsage:
    """What a run's agent consumed: case runs, and the tokens its model requests reported (a case
    run whose model never answered reports none)."""

    case_runs: int
    input_tokens: int
    output_tokens: int


def run_usage(store: Store, run_id: str) -> RunUsage:
    rows = store.fetchall(
        "SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0) "
        "FROM case_runs WHERE run_id = ?",
        [run_id],
    )
    n, tokens_in, tokens_out = rows[0]
    return RunUsage(int(n), int(tokens_in), int(tokens_out))
