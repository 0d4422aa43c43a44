"""The rubric: versioned questions for the judge, and the prompt built from them.

A rubric is a TOML file (`rubrics/default.toml`, or `--judge-rubric FILE`): `version`,
`instructions`, and `[[criteria]]` with `id`, `code` (the finding code of a failure), `question`
and optionally `requires_policy`. The prompt hash covers the template, the rubric's text and the
domain's policy text, so changing any of them changes the cache key of every judgment.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from traceladder.errors import UserError

VERDICTS = ("pass", "fail", "not_applicable")
# Bumped when the template below changes (it is hashed too; the number is for people).
TEMPLATE_VERSION = "1"
_TEMPLATE = """{instructions}

Criteria:
{criteria}

Policy:
{policy}

Reply with one JSON object: {{"criteria": {{"<criterion id>": {{"verdict": "pass" | "fail" |
"not_applicable", "reason": "<one sentence>"}}, ...}}}} with every criterion id above."""


@dataclass(frozen=True)
class Criterion:
    id: str
    code: str
    question: str
    requires_policy: bool = False


@dataclass(frozen=True)
class Rubric:
    version: str
    instructions: str
    criteria: tuple[Criterion, ...]
    text: str  # the file as read: hashed into every prompt

    @property
    def hash(self) -> str:
        """The rubric and the prompt template it is asked with (not the policy: that is per domain)."""
        return hashlib.sha256(
            "\x00".join((TEMPLATE_VERSION, _TEMPLATE, self.text)).encode("utf-8")
        ).hexdigest()

    @property
    def codes(self) -> dict[str, str]:
        return {c.id: c.code for c in self.criteria}


@dataclass(frozen=True)
class Prompt:
    """The system prompt for one domain's traces, the criteria it asks, and its hash."""

    system: str
    criteria: tuple[str, ...]
    hash: str


def default_rubric_path() -> Path:
    return Path(str(resources.files("traceladder.evaluate.judge") / "rubrics" / "default.toml"))


def load_rubric(path: Path | None = None) -> Rubric:
    """Read and check a rubric file; a `UserError` naming the problem otherwise."""
    path = path or default_rubric_path()
    try:
        text = path.read_text(encoding="utf-8")
        data: dict[str, Any] = tomllib.loads(text)
    except OSError as exc:
        raise UserError(f"cannot read the rubric {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not a valid TOML rubric: {exc}") from None
    criteria = []
    for n, raw in enumerate(data.get("criteria") or [], 1):
        if not isinstance(raw, dict) or not all(
            isinstance(raw.get(k), str) for k in ("id", "code", "question")
        ):
            raise UserError(f"{path}: criterion {n} needs string `id`, `code` and `question`")
        criteria.append(Criterion(raw["id"], raw["code"], " ".join(raw["question"].split()),
                                  bool(raw.get("requires_policy", False))))  # fmt: skip
    if not criteria:
        raise UserError(f"{path}: a rubric needs at least one [[criteria]]")
    if len({c.id for c in criteria}) != len(criteria):
        raise UserError(f"{path}: two criteria share an id")
    instructions = " ".join(str(data.get("instructions", "")).split())
    return Rubric(str(data.get("version", "?")), instructions, tuple(criteria), text)


def build_prompt(rubric: Rubric, policy: str | None) -> Prompt:
    """The system prompt for traces judged under `policy` (None: no policy text, so criteria that
    need one are not asked)."""
    asked = tuple(c for c in rubric.criteria if policy or not c.requires_policy)
    lines = "\n".join(f'- "{c.id}": {c.question}' for c in asked)
    system = _TEMPLATE.format(
        instructions=rubric.instructions, criteria=lines, policy=policy or "(none given)"
    )
    digest = hashlib.sha256(
        "\x00".join((TEMPLATE_VERSION, _TEMPLATE, rubric.text, policy or "")).encode("utf-8")
    ).hexdigest()
    return Prompt(system, tuple(c.id for c in asked), digest)


def reply_schema(criteria: tuple[str, ...]) -> dict[str, Any]:
    """The JSON Schema of a judge's reply: sent as the response format where the server takes
    one, and validated on every reply either way."""
    verdict = {
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": list(VERDICTS)}, "reason": {"type": "string"}},
        "required": ["verdict", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "criteria": {
                "type": "object",
                "properties": {c: verdict for c in criteria},
                "required": list(criteria),
                "additionalProperties": False,
            }
        },
        "required": ["criteria"],
        "additionalProperties": False,
    }
