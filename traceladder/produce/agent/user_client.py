"""The user model of a run with goal cases (`--user-model`): `sim:user`, or an OpenAI-compatible
model reached with the client settings of `--model` (its base URL, and the key the shared rule
gives that host: `produce.agent.client.choose_model`). Resolved before the run starts, so a missing or
unusable user model is one line and nothing is run."""

from __future__ import annotations

from collections.abc import Sequence

from traceladder.errors import UserError
from traceladder.produce.agent.client import build_client, choose_model
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.sim import is_sim
from traceladder.produce.agent.sim.user import SIM_USER
from traceladder.produce.agent.user_sim import UserModel, user_model_for
from traceladder.suite.cases.model import Case
from traceladder.suite.domain.base import Domain


def run_user_model(
    name: str | None, base_url: str | None, config: AgentConfig, cases: Sequence[Case], domain: Domain
) -> UserModel | None:
    """The user model for `cases` (None when none gives a user goal and none was asked for).
    `UserError` when a goal case has no user model, or a `sim:` name other than `sim:user`."""
    goals = [c.id for c in cases if c.goal is not None]
    if name is None:
        if goals:
            shown = ", ".join(goals[:3]) + (" …" if len(goals) > 3 else "")
            raise UserError(
                f"case {shown} gives a user goal: pass --user-model M (or {SIM_USER}, which needs no key)"
            )
        return None
    if is_sim(name):
        if name != SIM_USER:
            raise UserError(f"--user-model {name}: the simulated user is {SIM_USER}")
        return user_model_for(name, None, config.request_timeout_s)
    choice = choose_model(name, base_url)
    factory, _, _ = build_client(choice, config, (), domain)
    return user_model_for(name, factory, config.request_timeout_s)
