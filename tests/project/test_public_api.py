"""The public surface is small and deliberate: growing it shows up here."""

import traceladder.evaluate
import traceladder.evaluate.rungs
import traceladder.produce.agent
import traceladder.store
import traceladder.suite.cases
import traceladder.suite.domain


def test_public_names_are_pinned():
    assert traceladder.produce.agent.__all__ == [
        "AgentConfig",
        "RetryPolicy",
        "RunOptions",
        "RunSummary",
        "run_suite",
    ]
    assert traceladder.suite.domain.__all__ == [
        "DEFAULT_DOMAIN", "ChainSpec", "Domain", "LedgerEntry", "Sandbox", "SimHints", "ToolOutcome", "load_domain",
    ]  # fmt: skip
    assert traceladder.store.__all__ == ["DuckDBSpanExporter", "Store", "open_store"]
    assert sorted(traceladder.evaluate.rungs.__all__) == sorted([
        "EVALUATOR_VERSION", "ArgDiff", "Call", "CallCheck", "DomainRules", "Expected", "Finding", "Ladder", "Rung",
        "RungResult", "TraceInputs", "VERDICTS", "Verdict", "VerdictValue", "load_ladder",
    ])  # fmt: skip
    assert traceladder.evaluate.__all__ == ["EvaluationSummary", "evaluate_store"]
    assert (
        "load_cases" in traceladder.suite.cases.__all__ and "input_hashes" in traceladder.suite.cases.__all__
    )


def test_pure_layers_import_neither_duckdb_nor_opentelemetry():
    import subprocess
    import sys

    code = (
        "import sys; import traceladder.evaluate.rungs.ladder, traceladder.report.build, traceladder.report.gate, "
        "traceladder.suite.cases.validator, traceladder.suite.domain.retail.domain; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('duckdb', 'opentelemetry')]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_plugin_api_is_pinned():
    """What a plug-in may import (docs/extending.md); growing or shrinking it shows up here."""
    import traceladder.plugin_api.conventions as conventions
    import traceladder.plugin_api.domains as domains
    import traceladder.plugin_api.formats as formats
    import traceladder.plugin_api.rungs as rungs

    assert rungs.__all__ == [
        "Analysis", "ArgDiff", "Call", "CallCheck", "DomainRules", "Expected", "Finding", "RungResult",
        "RungStatus", "TraceInputs",
    ]  # fmt: skip
    assert domains.__all__ == [
        "CategorySpec", "ChainSpec", "Domain", "LedgerEntry", "Sandbox", "SimHints", "SuiteSpec", "SuiteTotals",
        "ToolOutcome",
    ]  # fmt: skip
    assert formats.__all__ == ["ReportFormat", "ReportRequest", "RunReport"]
    assert conventions.__all__ == [
        "ABSENT", "ARGS_EVENT", "ARGS_PART_STRING", "ARGS_STRUCTURED", "ARGS_TOOL_SPAN", "LLM", "TOOL",
        "Convention", "DefinitionList", "DefinitionSource", "Execution", "History", "Messages", "Role", "Side",
        "Sighting", "SpanView", "args_rank_of", "args_text", "as_dict", "as_list", "loads", "name_text",
        "sighting", "text", "tool_definitions",
    ]  # fmt: skip
    for module in (rungs, domains, formats, conventions):
        assert all(hasattr(module, name) for name in module.__all__)
