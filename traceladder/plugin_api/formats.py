"""The names a report-format plug-in uses: a `ReportFormat` whose `chunks(request)` yields the
report as text a piece at a time, from `request.opened` (a `RunReport`: the ReportV1 `head`
without results, and `result_batches()`), registered in the `traceladder.formats` entry-point group
and used where `--format NAME` names it (docs/extending.md)."""

from traceladder.workflows.report_files import RunReport
from traceladder.workflows.report_formats import ReportFormat, ReportRequest

__all__ = ["ReportFormat", "ReportRequest", "RunReport"]
