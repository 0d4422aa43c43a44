"""A process agent that misbehaves as argv[1] says, for the bad-input tests of --agent-cmd."""

import json
import os
import subprocess
import sys
import time
import urllib.request


def call_tool(name, arguments):
    body = json.dumps({"name": name, "arguments": arguments}).encode()
    request = urllib.request.Request(
        os.environ["TRACELADDER_TOOLS_URL"], body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)["content"]


def main(mode, marker):
    json.load(sys.stdin)  # the case: this agent needs none of it
    if mode == "exit":
        print("partial work", flush=True)
        print("Traceback (most recent call last):\nRuntimeError: the tool server is down", file=sys.stderr)
        sys.exit(3)
    if mode == "hang":
        time.sleep(3600)
    if mode == "megabytes":
        chunk = "x" * 65536 + "\n"
        for _ in range(160):  # 10 MB
            sys.stdout.write(chunk)
        sys.stdout.write("the answer\n")
        return
    if mode == "orphan":
        # A child that outlives its parent and would write the marker after it exits.
        child = subprocess.Popen(
            [sys.executable, "-c", f"import time; time.sleep(2); open({marker!r}, 'w').write('alive')"]
        )
        with open(f"{marker}.pid", "w") as pid_file:  # so the test can wait for exactly this child
            pid_file.write(str(child.pid))
        print("done; the child keeps running")
        return
    if mode == "garbage":
        endpoint = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces"
        request = urllib.request.Request(
            endpoint, b"\x00\xffnot otlp", {"Content-Type": "application/x-protobuf"}
        )
        try:
            urllib.request.urlopen(request)
        except urllib.error.HTTPError as exc:
            print(f"receiver said {exc.code}")
        return
    if mode == "tools":
        unknown = json.loads(call_tool("no_such_tool", "{}"))
        broken = json.loads(call_tool("get_order", '{"order_id": '))
        print(unknown["error"]["type"], broken["error"]["type"])
        return
    if mode == "silent":
        print("an answer, no spans, no tool calls")
        return
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
