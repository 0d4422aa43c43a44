"""`--agent MODULE:FUNCTION`: a Python callable in this process, called once per case.

The callable takes one argument, the `AgentCase`, and returns its final answer (a string, or
None for no answer); `async def` callables are awaited. It runs in a thread of its own inside the
case's root span context, so spans its instrumentation starts are children of that span. A call
that raises is AGENT_ERROR `agent_exception` with the exception's first line; one that outlives the
case timeout is AGENT_ERROR `timeout` — its thread is abandoned (Python cannot kill a thread; an
`async` agent is cancelled), and any tool it calls afterwards is refused.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import importlib.util
import inspect
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from traceladder.errors import UserError, first_line
from traceladder.produce.agent.budget import CaseStopped
from traceladder.produce.subject.case_input import AgentCase
from traceladder.produce.subject.spec import parse_target


class AgentFailed(Exception):
    """The agent's call ended without an answer: `error_type` (agent_exception, timeout, …)."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


AgentFn = Callable[[AgentCase], Any]


def load_agent(target: str) -> AgentFn:
    """The callable `MODULE:FUNCTION` names, checked to take one argument. The module is imported
    the way `python -m` would find it (the working directory first on the path), or from a file
    when MODULE is a .py path. `UserError` (one line) for a module that does not import, a missing
    attribute, something not callable or a callable of another signature."""
    module_name, function = parse_target(target)
    module = _import(module_name)
    fn: Any = module
    for part in function.split("."):
        if not hasattr(fn, part):
            raise UserError(f"--agent {target}: module {module_name} has no attribute {function}")
        fn = getattr(fn, part)
    if not callable(fn):
        raise UserError(f"--agent {target}: {function} is a {type(fn).__name__}, not a function")
    try:
        inspect.signature(fn).bind(object())
    except TypeError:
        raise UserError(
            f"--agent {target}: {function}{_signature(fn)} must take exactly one argument, the case"
        ) from None
    except ValueError:  # no signature to read (a builtin): calling it will tell
        pass
    return fn


def _signature(fn: Any) -> str:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(…)"


def _import(name: str) -> Any:
    try:
        if name.endswith(".py"):
            path = Path(name)
            if not path.is_file():
                raise UserError(f"--agent: no file {name}")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise UserError(f"--agent: {name} cannot be loaded as a module")
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
            return module
        if "" not in sys.path and str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))
        return importlib.import_module(name)
    except UserError:
        raise
    except (Exception, SystemExit) as exc:  # whatever the module's import runs
        raise UserError(
            f"--agent: module {name} does not import: {type(exc).__name__}: {first_line(exc)}"
        ) from None


def call_agent(fn: AgentFn, case: AgentCase, deadline: float, stop: threading.Event) -> str | None:
    """Call `fn(case)` in a thread of its own (in the caller's context) until it returns, the
    monotonic `deadline` passes (`AgentFailed` timeout) or `stop` is set (`CaseStopped`)."""
    box: dict[str, Any] = {}
    cancel: dict[str, Callable[[], None]] = {}

    def target() -> None:
        try:
            result = fn(case)
            if inspect.isawaitable(result):
                result = _await(result, cancel)
            box["result"] = result
        except BaseException as exc:  # the agent's failure is the case's outcome, whatever it is
            box["error"] = exc

    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(target,), name=f"agent-{case.id}", daemon=True)
    thread.start()
    while thread.is_alive():
        left = deadline - time.monotonic()
        if stop.is_set() or left <= 0:
            if "cancel" in cancel:
                cancel["cancel"]()
            if stop.is_set():
                raise CaseStopped()
            raise AgentFailed("timeout", "the agent did not return within the case timeout")
        thread.join(min(0.1, left))
    if "error" in box:
        exc = box["error"]
        raise AgentFailed("agent_exception", f"{type(exc).__name__}: {first_line(exc)}")
    return answer_text(box.get("result"))


def _await(awaitable: Any, cancel: dict[str, Callable[[], None]]) -> Any:
    """Run an awaitable on a loop of this thread; `cancel["cancel"]` cancels it from another."""
    loop = asyncio.new_event_loop()
    try:
        task = loop.create_task(_as_coroutine(awaitable))
        cancel["cancel"] = lambda: _cancel(loop, task)
        return loop.run_until_complete(task)
    finally:
        loop.close()


def _cancel(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    loop.call_soon_threadsafe(task.cancel)


async def _as_coroutine(awaitable: Any) -> Any:
    return await awaitable


def answer_text(result: Any) -> str | None:
    """The agent's return value as the case's final text: a string as is, None as no answer,
    anything else as its `str`."""
    if result is None or isinstance(result, str):
        return result
    return str(result)
