"""Published JSON Schemas of the files traceladder writes and reads (BaselineV1, …).

Every such file is validated against its schema when written and when read: a file that does not
validate is an error with the path of the first problem, never a half-understood input.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

SCHEMAS = {"BaselineV1": "baseline-v1.schema.json"}


@cache
def validator(name: str) -> Draft202012Validator:
    text = (resources.files("traceladder.schemas") / SCHEMAS[name]).read_text(encoding="utf-8")
    return Draft202012Validator(json.loads(text), format_checker=Draft202012Validator.FORMAT_CHECKER)


def first_problem(name: str, document: Any) -> str | None:
    """Where and how `document` breaks schema `name` (the most relevant error), or None."""
    errors = sorted(validator(name).iter_errors(document), key=lambda e: (len(e.absolute_path), e.message))
    if not errors:
        return None
    error = errors[0]
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    return f"{where}: {error.message[:200]}"
