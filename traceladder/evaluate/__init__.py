"""The evaluate stage: judging units read from the store → inputs → the ladder (`rungs/`) →
results; rung 5's LLM (`judge/`) and a conversation's verdict from its turns'.

`evaluate_store` is named here but loaded on first use: a module of `rungs/` or `judge/` imports
this package first, and those pure layers must not pull in DuckDB with it."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from traceladder.evaluate.passes import EvaluationSummary, evaluate_store

__all__ = ["EvaluationSummary", "evaluate_store"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from traceladder.evaluate import passes

        return getattr(passes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
