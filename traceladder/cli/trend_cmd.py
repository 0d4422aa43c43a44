"""`traceladder trend`: pass rates per deploy, hour or day, and a drop alarm for cron and CI."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from traceladder.cli.common import add_db_option, db_path, int_range, terminal
from traceladder.errors import ExitCode
from traceladder.files import strict_json_value
from traceladder.report.trend import (
    BY_CHOICES,
    DEFAULT_ALPHA,
    DEFAULT_MIN_TRACES,
    Bucket,
    ClassCount,
    Comparison,
    Trend,
    label,
    open_trend_store,
    trend,
)
from traceladder.text import printable

SHOWN_CLASSES = 3  # per table row; the JSON has every class


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "trend",
        help="pass rates per deploy or over time; exit 1 when a deploy's pass rate dropped",
        description="One row per service version (or hour, or day): traces, scored traces (PASS or FAIL), "
        "the pass rate PASS / (PASS + FAIL) — the reports' and the gate's — with its Wilson 95% "
        "interval, the success rate PASS / (PASS + FAIL + AGENT_ERROR), per-rung pass rates and the top "
        "failure classes, all weighted by sampling (NOT_EVALUATED and SKIP are counted but not rated). "
        "Then each bucket is compared with the one before it (same service and environment): a drop "
        "is flagged when both have at least --min-traces scored traces and the one-sided pooled "
        "two-proportion z-test of the pass rates gives p < --alpha. Exit codes: 0 no drop (or nothing "
        "to compare); 1 a drop was flagged; 2 usage or store error. See docs/live.md.",
    )
    add_db_option(p)
    p.add_argument("--by", choices=BY_CHOICES, default="version", help="bucket by (default: version)")
    p.add_argument("--service", metavar="NAME", help="only this service.name")
    p.add_argument("--environment", metavar="NAME", help="only this deployment.environment.name")
    p.add_argument("--alpha", type=_alpha, default=DEFAULT_ALPHA, metavar="A",
                   help=f"significance level of the drop test (default {DEFAULT_ALPHA})")  # fmt: skip
    p.add_argument("--min-traces", type=int_range(1, 1_000_000_000), default=DEFAULT_MIN_TRACES, metavar="N",
                   help=f"scored traces each side needs (default {DEFAULT_MIN_TRACES})")  # fmt: skip
    # `text` as `report` calls it; `table`, its former name here, is still accepted.
    p.add_argument("--format", choices=("text", "json", "table"), default="text",
                   help="output: text or json (default: text)")  # fmt: skip
    p.set_defaults(handler=handle)


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number like 0.05") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1 (exclusive), e.g. 0.05")
    return value


def handle(args: argparse.Namespace) -> int:
    with open_trend_store(db_path(args)) as store:
        result = trend(
            store, by=args.by, service=args.service, environment=args.environment, alpha=args.alpha,
            min_traces=args.min_traces,
        )  # fmt: skip
    if args.format == "json":
        document = strict_json_value(as_json(result, args.service, args.environment))  # NaN read from a store
        print(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        render_text(result, terminal())
    if not result.drops:
        return ExitCode.OK
    more = f" (and {len(result.drops) - 1} more)" if len(result.drops) > 1 else ""
    print(f"traceladder: trend: {printable(describe(result.drops[0], result))}{more}", file=sys.stderr)
    return ExitCode.CHECK_FAILED


def empty_message(result: Trend) -> str | None:
    """The one line for a store with nothing to rate; None when there is something."""
    if not result.stored_traces:
        return "no traces in the store yet; nothing to compare"
    if not result.judged:
        return (
            f"no judged traces yet ({result.stored_traces} trace(s) stored; judge them with "
            "`traceladder evaluate` or `traceladder watch`); nothing to compare"
        )
    return None


def sampling_note(result: Trend) -> str | None:
    parts = []
    for stage, rate, keep_errors in result.sampling:
        if stage == "serve":
            parts.append(
                f"serve sampled {rate * 100:g}% of traces before storing (counts are of stored traces)"
            )
        else:
            errors = ", keeping every error trace" if keep_errors else ""
            weighted = "judged traces weighted by what they stand for"
            parts.append(f"{stage} sampled {rate * 100:g}%{errors} ({weighted})")
    return "sampling: " + "; ".join(parts) if parts else None


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _ci(bucket: Bucket) -> str:
    row = bucket.row
    return "—" if row["ci_low"] is None else f"[{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]"


def _count(value: float) -> str:
    """A count of traces, whole: sampled, each judged trace stands for 1/rate of them, so a sum of
    weights is an estimate of whole traces (the header's sampling note says so), never "33.3"."""
    if not math.isfinite(value):  # a store written by others may hold NaN or infinite weights
        return str(value)
    return f"{round(value):d}"


def _where(bucket: Bucket) -> str:
    service, environment = bucket.key[0] or "(unknown)", bucket.key[1]
    return f"service {service}" + (f" ({environment})" if environment else "")


def describe(c: Comparison, result: Trend) -> str:
    """One line for one comparison: `DROP: …`, `no drop: …` or `not enough traces to compare: …`."""
    before, after = c.previous, c.current
    head = f"{_where(after)} {result.by} {label(after, result.by)}"
    if c.z is None or c.p is None:
        return (
            f"not enough traces to compare: {head} ({_count(after.row['scored_effective'])} scored) vs "
            f"{label(before, result.by)} ({_count(before.row['scored_effective'])} scored); "
            f"each needs --min-traces {result.min_traces}"
        )
    rates = (
        f"pass rate {_pct(after.row['pass_rate'])} {_ci(after)} vs {label(before, result.by)} "
        f"{_pct(before.row['pass_rate'])} {_ci(before)}, z={c.z:.2f}, p={c.p:.3g}"
    )
    if not c.flagged:
        return f"no drop: {head} {rates} >= {result.alpha:g}"
    grew = "; grew: " + ", ".join(g.describe() for g in c.grew) if c.grew else ""
    return f"DROP: {head} {rates} < {result.alpha:g}{grew}"


def render_text(result: Trend, console: Console) -> None:
    def line(text: str) -> None:
        console.print(Text(printable(text)), soft_wrap=True)

    empty = empty_message(result)
    if empty:
        line(empty)
        return
    judged = sum(b.row["judged"] for b in result.buckets)
    line(f"trend by {result.by}: {len(result.buckets)} bucket(s), {_count(judged)} judged trace(s)")
    note = sampling_note(result)
    if note:
        line(note)
    table = Table()
    for name in ("service", "env", result.by, "traces", "scored", "pass rate", "95% CI", "success rate"):
        left = name in ("service", "env", result.by, "95% CI")
        # text folds (wraps, never cut); a number never folds: "63.8%" split over two lines misreads
        table.add_column(name, justify="left" if left else "right", overflow="fold", no_wrap=not left)
    # no_wrap, not min_width: rich clamps a min_width column back up after shrinking the others to
    # fit, and the table then overflows the console and is cut; a no_wrap column keeps its width
    # ("invariants 100.0%" on one line) while the columns around it fold to make room.
    table.add_column("rungs (pass rate)", no_wrap=True)
    table.add_column("top failure classes (traces)", overflow="fold")
    talks = any(b.conversations.conversations for b in result.buckets)
    if talks:  # a store with conversations: how many ended in each bucket, and their pass rate
        table.add_column("conversations", justify="right", no_wrap=True)
    for b in result.buckets:
        rungs = "\n".join(f"{r.rung_name} {_pct(r.pass_rate)}" for r in b.rungs)
        classes = "\n".join(
            f"{c.failure_class} {_count(c.traces)}" + (f"\n  {c.where()}" if c.where() else "")
            for c in b.classes[:SHOWN_CLASSES]
        )
        row = b.row
        cells = [b.key[0] or "—", b.key[1] or "—", label(b, result.by), _count(row["traces"]),
                 _count(row["scored"]), _pct(row["pass_rate"]), _ci(b), _pct(row["success_rate"]), rungs,
                 classes]  # fmt: skip
        if talks:
            cells.append(f"{b.conversations.conversations} · {_pct(b.conversations.pass_rate)}")
        table.add_row(*(Text(printable(cell)) for cell in cells))
    console.print(table)
    for c in result.comparisons:
        line(describe(c, result))
    if not result.comparisons:
        line(f"nothing to compare: fewer than two {result.by}s per service and environment")


def _place(c: ClassCount) -> dict[str, Any]:
    return {"rung": c.rung, "rung_name": c.rung_name, "tool": c.tool, "param": c.param}


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def as_json(result: Trend, service: str | None, environment: str | None) -> dict[str, Any]:
    """Buckets carry their view row column for column, so `traceladder sql` reads the same numbers."""
    buckets = [
        {
            **{k: _plain(v) for k, v in b.row.items()},
            "rungs": [{**asdict(r), "pass_rate": r.pass_rate} for r in b.rungs],
            "failure_classes": [asdict(c) for c in b.classes],
            "conversations": {
                "conversations": b.conversations.conversations,
                "verdict_counts": b.conversations.verdicts,
                "scored": b.conversations.scored,
                "pass_rate": b.conversations.pass_rate,
            },
        }
        for b in result.buckets
    ]
    comparisons = [
        {
            "service": c.current.key[0],
            "environment": c.current.key[1],
            "previous": _plain(c.previous.key[2]),
            "current": _plain(c.current.key[2]),
            "tested": c.z is not None,
            "z": c.z,
            "p": c.p,
            "flagged": c.flagged,
            "grew": [
                {"failure_class": g.cls.failure_class, "before": g.before, "after": g.after, **_place(g.cls)}
                for g in c.grew
            ],
            "message": describe(c, result),
        }
        for c in result.comparisons
    ]
    return {
        "by": result.by,
        "filters": {"service": service, "environment": environment},
        "alpha": result.alpha,
        "min_traces": result.min_traces,
        "stored_traces": result.stored_traces,
        "sampling": [{"stage": s, "rate": r, "keep_errors": k} for s, r, k in result.sampling],
        "message": empty_message(result),
        "buckets": buckets,
        "comparisons": comparisons,
        "drops": len(result.drops),
    }
