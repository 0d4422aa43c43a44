"""The judge measured, not trusted: agreement with a labelled set, and drift across reruns.

The set (`meta/retail_v1.jsonl`, or `--meta FILE`) holds trajectories with a human label per
criterion. Each is judged `reruns` times with no cache. Agreement is measured on the first round:
accuracy, Cohen's kappa (agreement beyond chance; 1 perfect, 0 chance) and the confusion of label
× verdict per criterion — a `not_applicable` or a judge error counts as its own verdict, so it
can never pass for agreement. Drift is the share of (item, criterion) verdicts that differ
between rounds: what a judge's "same trace, different score" costs in practice.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.evaluate.judge.client import JudgeClient
from traceladder.evaluate.judge.rubric import Prompt, Rubric
from traceladder.evaluate.judge.trajectory import canonical_text
from traceladder.files import jsonl_lines

ERROR = "error"


@dataclass(frozen=True)
class MetaItem:
    id: str
    trajectory: dict[str, Any]
    labels: dict[str, str]


@dataclass(frozen=True)
class CriterionStats:
    criterion: str
    items: int
    agreed: int
    kappa: float | None
    confusion: dict[tuple[str, str], int]  # (label, verdict) → count
    flipped: int  # items whose verdict changed between rounds
    rounds: int

    @property
    def accuracy(self) -> float:
        return self.agreed / self.items if self.items else 0.0

    @property
    def drift(self) -> float:
        return self.flipped / self.items if self.items else 0.0


@dataclass(frozen=True)
class MetaReport:
    model: str
    items: int
    rounds: int
    criteria: tuple[CriterionStats, ...]
    errors: int  # judge errors over all rounds
    judgments: int  # judge requests over all rounds (items × rounds)
    first_error: str | None  # the reason of the first judge error, None without one
    disagreements: tuple[tuple[str, str, str, str], ...]  # (item, criterion, label, verdict) in round 1


def default_meta_path() -> Path:
    return Path(str(resources.files("traceladder.evaluate.judge") / "meta" / "retail_v1.jsonl"))


def load_meta(path: Path | None = None) -> list[MetaItem]:
    path = path or default_meta_path()
    items = []
    try:
        lines = jsonl_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read the meta-evaluation set {path}: {exc}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            items.append(MetaItem(str(raw["id"]), dict(raw["trajectory"]), dict(raw["labels"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}:{n}: not a meta-evaluation item ({exc})") from None
    if not items:
        raise UserError(f"{path}: no items")
    return items


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of (label, verdict) pairs; None when chance agreement is total (one category)."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    labels, verdicts = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(labels[c] * verdicts[c] for c in labels.keys() | verdicts.keys()) / (n * n)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def measure(
    items: Sequence[MetaItem],
    client: JudgeClient,
    prompt: Prompt,
    rubric: Rubric,
    *,
    rounds: int = 3,
    concurrency: int = 4,
) -> MetaReport:
    """Judge every item `rounds` times (no cache) and compare with the labels."""
    codes = rubric.codes

    reasons: list[str] = []

    def verdicts(item: MetaItem) -> dict[str, str]:
        reply = client.ask(prompt, canonical_text(item.trajectory), codes)
        if reply.criteria is None:
            reasons.append(reply.error or "no usable reply")  # list.append is atomic across threads
            return dict.fromkeys(prompt.criteria, ERROR)
        return {c.criterion: c.verdict for c in reply.criteria}

    jobs = [item for _ in range(rounds) for item in items]
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="meta") as pool:
        answers = list(pool.map(verdicts, jobs))
    by_round = [answers[r * len(items) : (r + 1) * len(items)] for r in range(rounds)]
    errors = sum(1 for a in answers if ERROR in a.values())
    stats, disagreements = [], []
    for criterion in prompt.criteria:
        labelled = [(i, item) for i, item in enumerate(items) if criterion in item.labels]
        pairs = [(item.labels[criterion], by_round[0][i][criterion]) for i, item in labelled]
        flipped = sum(1 for i, _ in labelled if len({by_round[r][i][criterion] for r in range(rounds)}) > 1)
        stats.append(
            CriterionStats(
                criterion,
                len(pairs),
                sum(a == b for a, b in pairs),
                cohen_kappa(pairs),
                dict(Counter(pairs)),
                flipped,
                rounds,
            )
        )
        disagreements += [
            (item.id, criterion, a, b) for (_, item), (a, b) in zip(labelled, pairs, strict=True) if a != b
        ]
    return MetaReport(
        client.endpoint.model, len(items), rounds, tuple(stats), errors, len(jobs),
        reasons[0] if reasons else None, tuple(disagreements),
    )  # fmt: skip
