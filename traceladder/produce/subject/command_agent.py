"""`--agent-cmd "CMD …"`: any process, in any language, started once per case.

The case arrives as JSON on stdin (and in the file `TRACELADDER_CASE_FILE` names, for programs
that cannot read stdin); the process's environment says where its spans go and which case they
belong to (`case_environment`). Its stdout is its final answer; its exit code and the tail of its
stderr are recorded. A non-zero exit is AGENT_ERROR `agent_exit` with that tail; a process that
outlives the case timeout is killed, with every process it started (its own process group), and
is AGENT_ERROR `timeout`. Output is read as it comes and only a bounded tail kept, so an agent
that prints megabytes costs that much reading, not that much memory.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO
from urllib.parse import quote

from traceladder.instrumentation import semconv as sc
from traceladder.produce.agent.budget import CaseStopped

ANSWER_LIMIT = 64 * 1024  # bytes of stdout kept as the final answer
STDERR_TAIL = 2000  # characters of stderr kept for the error message
_KILL_GRACE_S = 2.0


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None  # None: killed by us (timeout or stop)
    stdout: str  # the answer (its last ANSWER_LIMIT bytes)
    stderr_tail: str
    stdout_truncated: bool


def case_environment(
    base: Mapping[str, str],
    *,
    receiver_url: str,
    run_id: str,
    case_id: str,
    repeat: int,
    turn: int = 0,
    traceparent: str,
    tools_url: str,
    mcp_url: str | None,
    model: str,
    model_url: str | None,
    api_key: str | None,
    case_file: str,
) -> dict[str, str]:
    """The one place a command agent's environment is built (add a variable here and every case
    gets it).

    `OTEL_EXPORTER_OTLP_ENDPOINT` points at the run's receiver; `OTEL_RESOURCE_ATTRIBUTES` carries
    the run id, case id, repeat and turn (every OTel SDK honours it, so each span is attributed to its
    case even when the SDK starts a trace of its own); `TRACEPARENT` lets an SDK that reads it
    join the case's root span; `TRACELADDER_MCP_URL` is the case run's MCP tool server (only when
    the run has one: the `mcp` extra is installed). Exporter settings of the parent that would
    send spans elsewhere are replaced, not merged; a parent's MCP URL is dropped."""
    env = {k: v for k, v in base.items() if not k.startswith("OTEL_EXPORTER_OTLP_")}
    resource = {sc.RUN_ID: run_id, sc.CASE_ID: case_id, sc.CASE_REPEAT: str(repeat), sc.CASE_TURN: str(turn)}
    env.update({
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver_url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_RESOURCE_ATTRIBUTES": ",".join(f"{k}={quote(v, safe='')}" for k, v in resource.items()),
        "TRACEPARENT": traceparent,
        "TRACELADDER_RUN_ID": run_id,
        "TRACELADDER_CASE_ID": case_id,
        "TRACELADDER_TOOLS_URL": tools_url,
        "TRACELADDER_CASE_FILE": case_file,
        "TRACELADDER_MODEL": model,
        "OPENAI_MODEL": model,
    })  # fmt: skip
    env.pop("TRACELADDER_MCP_URL", None)  # a parent's (an enclosing run's) never reaches a case
    if mcp_url:
        env["TRACELADDER_MCP_URL"] = mcp_url
    if model_url:
        env["OPENAI_BASE_URL"] = model_url
    if api_key:
        env["OPENAI_API_KEY"] = api_key
    return env


def run_command(
    argv: list[str], stdin: bytes, env: Mapping[str, str], deadline: float, stop: threading.Event
) -> CommandResult:
    """Run `argv` to its end, feeding `stdin`. Past the monotonic `deadline` the process group is
    killed and the result has `exit_code` None; `stop` kills it the same way and raises
    `CaseStopped`. Children still running when the process exits are killed too: nothing a case
    started outlives it. `OSError` when the program cannot be started."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(env), start_new_session=True,
    )  # fmt: skip
    out = _Tail(ANSWER_LIMIT)
    err = _Tail(STDERR_TAIL * 4)
    readers = [_reader(proc.stdout, out), _reader(proc.stderr, err), _writer(proc.stdin, stdin)]
    killed = False
    try:
        while proc.poll() is None:
            if stop.is_set() or time.monotonic() >= deadline:
                killed = True
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=min(0.1, max(0.0, deadline - time.monotonic())))
    finally:
        _kill_group(proc)
        for thread in readers:  # a grandchild holding a pipe was killed with the group
            thread.join(_KILL_GRACE_S)
    if killed and stop.is_set():
        raise CaseStopped()
    tail = err.text()[-STDERR_TAIL:]
    return CommandResult(None if killed else proc.returncode, out.text(), tail, out.dropped > 0)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=_KILL_GRACE_S)


class _Tail:
    """The last `limit` bytes of a stream, and how many were dropped before them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.size += len(chunk)
        while self.size - len(self.chunks[0]) >= self.limit:
            first = self.chunks.popleft()
            self.size -= len(first)
            self.dropped += len(first)

    def text(self) -> str:
        data = b"".join(self.chunks)
        if len(data) > self.limit:
            self.dropped += len(data) - self.limit
            data = data[-self.limit :]
        return data.decode("utf-8", errors="replace")


def _reader(stream: IO[bytes] | None, tail: _Tail) -> threading.Thread:
    def read() -> None:
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read1(1 << 16):  # type: ignore[attr-defined]
                tail.add(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def _writer(stream: IO[bytes] | None, data: bytes) -> threading.Thread:
    def write() -> None:
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):  # an agent that never reads stdin
            stream.write(data)
            stream.close()

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread
