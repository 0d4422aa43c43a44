"""The plain-openai example with its model calls instrumented by OpenInference (as many teams'
are), executing each tool call through `case.call_tool` *without* the model's call id: the model's
call is then seen twice — on the LLM span (with its id) and as the `call_tool` execution."""

import sys
from pathlib import Path

from openinference.instrumentation.openai import OpenAIInstrumentor

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "agents"))
import plain_openai  # noqa: E402

OpenAIInstrumentor().instrument()  # the global tracer provider: the run's, set before this import


class _WithoutIds:
    """The case, but `call_tool` drops the model's call id the example passes."""

    def __init__(self, case):
        self._case = case

    def __getattr__(self, name):
        return getattr(self._case, name)

    def call_tool(self, name, arguments, call_id=None):
        return self._case.call_tool(name, arguments)


def run(case):
    return plain_openai.run(_WithoutIds(case))
