"""An agent that probes the run's MCP tool server: one call through its own URL (a `get_order`
naming its case, so the span says whose call it was), then the same call through URLs that are
not its own — another case's id where its key stands, and a made-up key. Its answer is a JSON
object of what each attempt did. Run as a command (`$TRACELADDER_MCP_URL`, the case on stdin) or
as `--agent tests/subject/agents/mcp_probe.py:run` (`case.mcp_url`)."""

import asyncio
import json
import os
import sys

OTHER = {"fc-d2-001": "fc-d4-001", "fc-d4-001": "fc-d2-001"}


async def attempt(url, case_id, probe):
    from mcp import Client  # only when there is a URL: without the extra there is none

    try:
        async with Client(url) as tools:
            result = await asyncio.wait_for(tools.call_tool("get_order", {"order_id": probe}), 30)
            return "executed" if result.content else "empty"
    except Exception as exc:  # what a refused URL does to a real client
        return f"refused: {type(exc).__name__}"


async def probe(url, case_id):
    if not url:
        return json.dumps({"mcp_url": None})
    base, key = url.rsplit("/cases/", 1)[0], url.split("/cases/", 1)[1].split("/", 1)[0]
    guesses = {
        "other_case": f"{base}/cases/{OTHER.get(case_id, 'x')}/mcp",
        "made_up": f"{base}/cases/k{key}/mcp",
    }
    outcome = {"own": await attempt(url, case_id, f"OWN-{case_id}")}
    for name, guess in guesses.items():
        outcome[name] = await attempt(guess, case_id, f"PROBE-{case_id}")
    return json.dumps(outcome, sort_keys=True)


async def run(case):
    return await probe(case.mcp_url, case.id)


if __name__ == "__main__":
    case = json.load(sys.stdin)
    print(asyncio.run(probe(os.environ.get("TRACELADDER_MCP_URL"), case["case_id"])))
