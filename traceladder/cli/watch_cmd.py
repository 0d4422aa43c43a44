"""`traceladder watch`: judge live traces continuously as they complete."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from traceladder.cli.common import (
    add_db_option,
    add_domain_option,
    add_live_options,
    add_rungs_option,
    db_path,
    int_range,
    ladder_for,
    live_options,
    seconds,
)
from traceladder.cli.judge_options import add_judge_options, judge_options
from traceladder.errors import ExitCode
from traceladder.text import printable
from traceladder.workflows.watch import WatchOptions, watch


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "watch",
        help="judge live traces continuously as they complete (next to `serve`, same store)",
        description="Poll the store and judge every trace that is complete: its root span has arrived "
        "and nothing of it arrived for --settle seconds (a trace whose root never arrives: after "
        "--orphan-after). A span arriving later re-opens the trace and its result is replaced. The "
        "watermark commits with the results, so a restarted watch neither judges a trace twice nor "
        "skips one. After each batch: its verdict counts, then each FAIL and AGENT_ERROR trace with its "
        "class. Stops on Ctrl-C or SIGTERM after the batch in hand.",
    )
    add_db_option(p)
    add_domain_option(p, "tool schemas for traces that captured no definitions (and no --tools)")
    add_live_options(p)
    add_rungs_option(p)
    p.add_argument("--settle", type=seconds(allow_zero=True), default=30.0, metavar="S",
                   help="seconds without a new span before a trace is complete (default 30)")  # fmt: skip
    p.add_argument("--orphan-after", type=seconds(), default=None, metavar="S",
                   help="judge a rootless trace after this long (default 10 × --settle)")  # fmt: skip
    p.add_argument(
        "--interval", type=seconds(), default=2.0, metavar="S", help="seconds between polls (default 2)"
    )
    p.add_argument("--batch", type=int_range(1, 1_000_000), default=5_000, metavar="N",
                   help="traces judged per transaction (default 5000)")  # fmt: skip
    p.add_argument("--conversation-idle", type=seconds(allow_zero=True), default=None, metavar="S",
                   help="judge a conversation of several turns once none of its traces gained a span "
                        "for this long (docs/conversations.md); default: with each of its turns")  # fmt: skip
    p.add_argument("--once", action="store_true", help="judge what is due now, then exit (cron)")
    add_judge_options(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    stop = threading.Event()
    options = WatchOptions(
        settle_s=args.settle, orphan_after_s=args.orphan_after, interval_s=args.interval, batch=args.batch,
        domain=args.domain, live=live_options(args), judge=judge_options(args, simulated=False),
        ladder=ladder_for(args), conversation_idle_s=args.conversation_idle, once=args.once,
        stopping=stop.is_set,
    )  # fmt: skip

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}

    def say(text: str) -> None:
        print(f"traceladder watch: {printable(text)}", file=sys.stderr, flush=True)

    try:
        progress = watch(db_path(args), options, say)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    counts = " ".join(f"{v}={n}" for v, n in sorted(progress.verdicts.items()))
    line = f"watched batches={progress.batches} judged={progress.judged} {counts}".rstrip()
    line += f" conversations={progress.conversations}"  # judged, as traces are
    print(line)
    return ExitCode.OK
