"""The one warning about an invariant policy that only the store can give: a `[service.NAME]` or
`[agent.NAME]` section that matches no trace in it is most likely a typo, and its rules then
silently judge nothing. `evaluate` and `watch` both say it, in the same words, from here.
"""

from __future__ import annotations

from collections.abc import Callable

from traceladder.evaluate.rungs.policy import PolicySet
from traceladder.store.db import Store
from traceladder.store.readers import services_and_agents


def unseen_policy_sections(store: Store, policies: PolicySet | None) -> list[str]:
    """One warning per policy section whose service or agent no stored trace has (none without a
    policy)."""
    if policies is None:
        return []
    services, agents = services_and_agents(store)
    return [
        f"warning: the policy's [{kind}.{name!r}] section matches no trace in the store"
        for kind, name in policies.sections()
        if name not in (services if kind == "service" else agents)
    ]


def warn_unseen_policy_sections(store: Store, policies: PolicySet | None, say: Callable[[str], None]) -> None:
    for warning in unseen_policy_sections(store, policies):
        say(warning)
