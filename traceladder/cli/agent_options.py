"""`run --agent MODULE:FUNCTION` / `run --agent-cmd CMD` (and `baseline init`'s): the flags of the
team's agent under test. They go into the `RunRequest` (`cli/run_options.py`); the `run` workflow
runs the agent instead of the built-in loop when one is named, and refuses the loop's own flags."""

from __future__ import annotations

import argparse


def add_user_model_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--user-model",
        metavar="M",
        help="the model that plays the user of cases giving a user goal: sim:user (built in, no key) "
        "or an OpenAI-compatible model, reached like --model (docs/conversations.md)",
    )


def add_agent_options(p: argparse.ArgumentParser) -> None:
    add_user_model_option(p)
    group = p.add_argument_group("your agent under test (instead of the built-in loop)")
    group.add_argument(
        "--agent",
        metavar="MODULE:FUNCTION",
        help="call this Python function once per case with the case (id, messages, tools, system "
        "prompt, model, call_tool); sync or async; its return value is the answer",
    )
    group.add_argument(
        "--agent-cmd",
        metavar="CMD",
        help="start this command once per case: the case as JSON on stdin, OTLP endpoint and case ids in "
        "its environment; stdout is the answer, a non-zero exit is AGENT_ERROR",
    )
    group.add_argument(
        "--agent-version",
        metavar="V",
        help="the agent's version as recorded (default: the git commit of its working tree)",
    )
