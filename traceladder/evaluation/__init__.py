"""The evaluation layer: judging units read from the store → inputs → the ladder → results."""

from traceladder.evaluation.evaluate import EvaluationSummary, evaluate_store

__all__ = ["EvaluationSummary", "evaluate_store"]
