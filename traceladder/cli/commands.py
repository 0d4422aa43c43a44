"""The registry of command modules, in the order `--help` lists them."""

from traceladder.cli import (
    baseline_cmd,
    cases_cmd,
    compare_cmd,
    consistency_cmd,
    domain_cmd,
    evaluate_cmd,
    export_cmd,
    gate_cmd,
    ingest_cmd,
    report_cmd,
    run_cmd,
    selfcheck_cmd,
    serve_cmd,
    sql_cmd,
    trend_cmd,
    watch_cmd,
)

ALL = [
    run_cmd,
    serve_cmd,
    ingest_cmd,
    watch_cmd,
    trend_cmd,
    evaluate_cmd,
    export_cmd,
    report_cmd,
    sql_cmd,
    gate_cmd,
    baseline_cmd,
    consistency_cmd,
    compare_cmd,
    selfcheck_cmd,
    cases_cmd,
    domain_cmd,
]
