"""A process agent that calls `get_order` over TRACELADDER_TOOLS_URL three ways: with a call id
that is not a string (refused), with the model's id as a string, and with none; it prints what
the server said to each."""

import json
import os
import sys
import urllib.error
import urllib.request


def post(body):
    request = urllib.request.Request(
        os.environ["TRACELADDER_TOOLS_URL"], json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as response:
            return f"{response.status}"
    except urllib.error.HTTPError as exc:
        return f"{exc.code} {json.load(exc)['error']['message']}"


json.load(sys.stdin)
arguments = '{"order_id": "W441"}'
print(post({"name": "get_order", "arguments": arguments, "call_id": 7}))
print(post({"name": "get_order", "arguments": arguments, "call_id": "call_model_1"}))
print(post({"name": "get_order", "arguments": arguments}))
