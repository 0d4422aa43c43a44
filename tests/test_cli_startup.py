"""Every test (and every user) pays the CLI's start-up on each command: the OpenAI client library
(~0.4 s to import) loads only for the commands that run an agent."""

from __future__ import annotations

import subprocess
import sys


def test_the_cli_starts_without_the_openai_library():
    code = (
        "import sys; import traceladder.cli.main, traceladder.agent.config; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'httpx2'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_agent_package_still_exports_the_runner():
    import traceladder.agent
    from traceladder.agent import runner

    assert traceladder.agent.run_suite is runner.run_suite
    assert traceladder.agent.RunOptions is runner.RunOptions
    assert traceladder.agent.RunSummary is runner.RunSummary
