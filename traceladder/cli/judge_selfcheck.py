"""`traceladder selfcheck --judge`: the judge's agreement with labels, and its rerun drift."""

from __future__ import annotations

import argparse

from traceladder.cli.common import domain_name
from traceladder.cli.judge_options import judge_options
from traceladder.domain.registry import load_domain
from traceladder.errors import ExitCode, UserError
from traceladder.judge.client import JudgeClient
from traceladder.judge.meta import load_meta, measure
from traceladder.judge.rubric import build_prompt
from traceladder.text import printable


def judge_selfcheck(args: argparse.Namespace) -> int:
    if args.rounds < 1:
        raise UserError("--rounds must be at least 1")
    for name, default in (
        ("judge_budget", None),
        ("no_cache", True),
        ("no_judge", False),
        ("judge_prices", None),
        ("judge_concurrency", 4),
    ):
        setattr(args, name, default)
    args.judge_model = args.judge_model or "sim:judge"
    options = judge_options(args, simulated=True)
    assert options is not None  # a model is always named here
    items = load_meta(args.meta)
    prompt = build_prompt(options.rubric, load_domain(domain_name(args)).judge_policy)
    client = JudgeClient(options.endpoint)
    try:
        client.check()  # an unreachable judge, or one that refuses the key, is not a 0% judge
        report = measure(items, client, prompt, options.rubric, rounds=args.rounds)
    finally:
        client.close()
    if report.errors == report.judgments:
        raise UserError(
            f"the judge {report.model!r} gave no usable reply to any of the {report.judgments} "
            f"requests ({report.first_error}), so nothing was measured; check --judge-model and "
            "--judge-base-url"
        )
    simulated = (
        " (the simulated judge: fixed heuristics, not a model)" if report.model.startswith("sim:") else ""
    )
    print(
        f"judge selfcheck: {report.model}{simulated}: "
        f"{report.items} labelled trajectories × {report.rounds} rounds"
    )
    low = False
    for s in report.criteria:
        kappa = "undefined" if s.kappa is None else f"{s.kappa:.3f}"
        confusion = " ".join(f"{label}→{verdict}={n}" for (label, verdict), n in sorted(s.confusion.items()))
        print(
            f"{s.criterion}: accuracy={s.accuracy:.3f} ({s.agreed}/{s.items}) kappa={kappa} "
            f"drift={s.drift:.3f} ({s.flipped}/{s.items} flipped over {s.rounds} rounds) "
            f"confusion: {confusion}"
        )
        low = low or (args.min_kappa is not None and (s.kappa is None or s.kappa < args.min_kappa))
        low = low or (args.max_drift is not None and s.drift > args.max_drift)
    for item, criterion, label, verdict in report.disagreements:
        print(printable(f"DISAGREE {item} {criterion}: label={label} judge={verdict}"))
    print(f"judge_errors={report.errors}")
    return ExitCode.CHECK_FAILED if low else ExitCode.OK
