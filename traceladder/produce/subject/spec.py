"""Which agent a run tests, and its version: `--agent MODULE:FUNCTION` or `--agent-cmd "CMD …"`.

A run's subject is recorded in `runs.model` as `agent:MODULE:FUNCTION` or `agent-cmd:CMD`, so
reports, baselines, the gate and `compare` name it where they name a model. Its version (the git
commit of the agent's working tree, or `--agent-version`) is recorded as the `agent_version` input:
two versions of one agent stay comparable — measuring the change is the point — and `compare`
names the version as what differs.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from traceladder.errors import UserError

PYTHON, COMMAND = "python", "command"
UNVERSIONED = "unversioned"
_TARGET = re.compile(r"^(?P<module>[^:\s]+):(?P<function>[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)$")


@dataclass(frozen=True)
class AgentSpec:
    """An agent to run: `kind` python (target `MODULE:FUNCTION`, MODULE a dotted name or a .py
    path) or command (target the command line, split as a POSIX shell would)."""

    kind: str
    target: str
    version: str

    @property
    def subject(self) -> str:
        """What `runs.model` records for this agent."""
        return f"agent:{self.target}" if self.kind == PYTHON else f"agent-cmd:{self.target}"

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.target)


def parse_target(target: str) -> tuple[str, str]:
    """`pkg.mod:run` → ("pkg.mod", "run"); `agents/x.py:run` → ("agents/x.py", "run").
    `UserError` for anything else."""
    found = _TARGET.match(target.strip())
    if not found:
        raise UserError(f"--agent {target!r} is not MODULE:FUNCTION (e.g. my_agent:run or agents/bot.py:run)")
    return found["module"], found["function"]


def agent_spec(agent: str | None, command: str | None, version: str | None) -> AgentSpec:
    """The spec the flags ask for; its version from `version`, else the git commit of the
    agent's working tree (a `+dirty.HASH` suffix names uncommitted changes), else `unversioned`."""
    if (agent is None) == (command is None):
        raise UserError("give one of --agent MODULE:FUNCTION and --agent-cmd CMD")
    if agent is not None:
        module, _ = parse_target(agent)
        where = Path(module).parent if module.endswith(".py") else Path.cwd()
        return AgentSpec(PYTHON, agent.strip(), version or git_version(where))
    assert command is not None
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UserError(f"--agent-cmd {command!r} is not a command line: {exc}") from None
    if not argv:
        raise UserError("--agent-cmd is empty; give the command that runs your agent")
    return AgentSpec(COMMAND, command.strip(), version or git_version(Path.cwd()))


def git_version(directory: Path) -> str:
    """The commit checked out in `directory`'s git work tree, `+dirty.<hash of the diff>` when the
    tracked files differ from it; `unversioned` outside git (or without git)."""

    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["git", "-C", str(directory or "."), *args], capture_output=True, timeout=30, check=False
        )

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return UNVERSIONED
        commit = head.stdout.decode().strip()
        diff = git("diff", "HEAD", "--no-ext-diff", "--binary")
    except (OSError, subprocess.TimeoutExpired):
        return UNVERSIONED
    if diff.returncode == 0 and diff.stdout:
        return f"{commit}+dirty.{hashlib.sha256(diff.stdout).hexdigest()[:12]}"
    return commit
