"""A real `traceladder serve` in a subprocess on 127.0.0.1, and a small HTTP client for it."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PB = "application/x-protobuf"
JS = "application/json"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


class ServeProcess:
    """`traceladder serve --port 0 …` started in its own process group; `port` is read from the
    line it prints when it listens."""

    def __init__(self, db: Path, *args: str, env: dict[str, str] | None = None, workers: int = 1,
                 preexec_fn: Callable[[], None] | None = None) -> None:  # fmt: skip
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "traceladder", "serve", "--db", str(db), "--port", "0",
             "--workers", str(workers), "--fold-interval", "0.2", *args],
            cwd=ROOT, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=preexec_fn,
        )  # fmt: skip
        self.stderr_lines: list[str] = []
        deadline = time.monotonic() + 60
        assert self.proc.stderr is not None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline().decode()
            if not line:
                raise AssertionError(f"serve exited early: {self.proc.wait()} {''.join(self.stderr_lines)}")
            self.stderr_lines.append(line)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                return
        raise AssertionError("serve did not start")

    def post(self, path: str, body: bytes, content_type: str | None = PB, headers: dict[str, str] | None = None,
             method: str = "POST") -> Reply:  # fmt: skip
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            all_headers = {"Content-Type": content_type} if content_type else {}
            all_headers.update(headers or {})
            conn.request(method, path, body=body, headers=all_headers)
            r = conn.getresponse()
            return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
        finally:
            conn.close()

    def get(self, path: str) -> Reply:
        return self.post(path, b"", None, method="GET")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> tuple[int, str]:
        """Signal the process (group for SIGKILL: workers die with it) and return (code, stderr)."""
        if sig == signal.SIGKILL:
            self.proc.kill()
        else:
            self.proc.send_signal(sig)
        _, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, "".join(self.stderr_lines) + err.decode()

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=30)  # reaps it and closes the pipes
