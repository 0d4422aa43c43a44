"""A toy report format, as a plug-in would add one: one module, registered by an entry point,
importing only `traceladder.plugin_api.formats`. One CSV line per trace, streamed a batch at a
time; `broken` names something that is not a format, `text` tries to shadow a built-in."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from traceladder.plugin_api.formats import ReportFormat, ReportRequest


def _chunks(request: ReportRequest) -> Iterator[str]:
    yield "trace_id,case_id,verdict\n"
    for batch in request.opened.result_batches():
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for result in batch:
            writer.writerow([result["trace_id"], result.get("case_id") or "", result["verdict"]])
        yield out.getvalue()


CSV = ReportFormat("csv", "one line per trace: trace, case, verdict", _chunks)
NOT_A_FORMAT = {"name": "broken"}
SHADOW = ReportFormat("text", "tries to replace the built-in text format", _chunks)
