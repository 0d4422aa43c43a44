"""The policy file: TOML sections resolved key by key (defaults → service → agent), and every
mistake reported with the file, the right line and the fix (the checks themselves: test_invariants.py)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from traceladder.errors import UserError
from traceladder.evaluate.policy_file import load_policy
from traceladder.evaluate.rungs.policy import Confirmation, Policy, PolicySet

# --- sections --------------------------------------------------------------------------------------


def sample(tmp_path: Path) -> PolicySet:
    path = tmp_path / "policy.toml"
    path.write_text(
        """\
[defaults]
forbidden_tools = ["delete_*"]
max_turns = 10

[[defaults.confirm]]
tool = "request_*"
by = "confirm_action"

[defaults.parameters]
"request_*.order_id" = '#W\\d{7}'
mcp.fs.read.path = '/srv/.*'

[service."checkout"]
max_turns = 5
parameters = {}

[agent."planner"]
max_turns = 2
allowed_tools = ["get_*"]
"""
    )
    return load_policy(path)


def test_sections_resolve_key_by_key(tmp_path):
    policies = sample(tmp_path)
    assert policies.sections() == (("agent", "planner"), ("service", "checkout"))
    base = policies.select(None, None)
    assert base is not None and base.max_turns == 10 and base.forbidden_tools == ("delete_*",)
    assert base.confirm == (Confirmation("request_*", ("confirm_action",)),)
    assert [(p.tool, p.param, p.pattern.pattern) for p in base.parameters] == [
        ("request_*", "order_id", r"#W\d{7}"),
        ("mcp.fs.read", "path", "/srv/.*"),
    ]
    assert policies.select("unknown", "nobody") == base
    checkout = policies.select("checkout", None)
    assert checkout is not None
    assert (checkout.max_turns, checkout.forbidden_tools, checkout.parameters) == (5, ("delete_*",), ())
    both = policies.select("checkout", "planner")
    assert both is not None and (both.max_turns, both.allowed_tools, both.parameters) == (2, ("get_*",), ())
    assert both.source == 'defaults + service "checkout" + agent "planner"'
    assert pickle.loads(pickle.dumps(policies)).select("checkout", "planner") == both


def test_no_section_applies_without_defaults(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('[service."a"]\nmax_turns = 1\n')
    policies = load_policy(path)
    assert policies.select("b", None) is None and policies.select(None, None) is None
    assert policies.select("a", "x") == Policy(max_turns=1, source='service "a"')


# --- loader errors: the path, the right line, the fix ----------------------------------------------

BAD = [
    ("[defaults]\nmax_turns = \n", 2, "invalid TOML: Invalid value (column 13)"),
    ('[defaults]\nmax_tool_calls = [1,\n', 2, "invalid TOML: "),
    ("# a policy\n[defaults]\nmax_turn = 3\n", 3, "unknown key 'max_turn' in [defaults]; did you mean 'max_turns'?"),
    ('[defaults]\nmax_turns = 2\n\n[service."web"]\nmax_turns = "3"\n', 5,
     "max_turns must be a whole number, not a string; write e.g. max_turns = 3"),
    ("[defaults]\nmax_tool_calls = true\n", 2, "max_tool_calls must be a whole number, not a boolean"),
    ("[defaults]\nmax_tool_errors = 2.5\n", 2, "max_tool_errors must be a whole number, not 2.5; write e.g. max_tool_errors = 3"),
    ("[defaults]\nmax_turns = -1\n", 2, "max_turns must be 0 or more, not -1"),
    ("[defaults]\nmax_latency_ms = nan\n", 2, "max_latency_ms must be a finite number"),
    ('[defaults]\nforbid_duplicate_calls = "yes"\n', 2, "forbid_duplicate_calls must be true or false"),
    ('[defaults]\nforbidden_tools = [\n  "a",\n  "",\n]\nmax_turn = 3\n', 2, "forbidden_tools item 2 is an empty tool glob"),
    ('[defaults]\nforbidden_tools = [\n  "a",\n]\nmax_turn = 3\n', 5, "unknown key 'max_turn'"),
    ('[defaults]\nallowed_tools = "get_*"\n', 2, "allowed_tools must be an array of tool globs"),
    ("[defaults.parameters]\n\"request_*.amount\" = '(\\d+'\n", 2,
     "parameter rule 'request_*.amount' has an invalid regex '(\\d+': missing ), unterminated subpattern"),
    ("[defaults]\nmax_turns = 1\n[defaults.parameters]\nget_order.id = '['\n", 4, "parameter rule 'get_order.id'"),
    ("[defaults]\nparameters = { \"a.b\" = 'x', c = 'y' }\n", 2, "parameter rule 'c' must be named \"TOOL_GLOB.PARAM\""),
    ("[defaults]\nparameters = { \"a.b\" = 3 }\n", 2, "must be a regex (a string), not a whole number"),
    ('[service."a"]\nmax_turns = 1\n[[service."a".confirm]]\ntool = "x"\nby = "y"\n[defaults]\nmax_turns = 1\n'
     '[[defaults.confirm]]\ntool = "x"\nby = "y"\n\n[[defaults.confirm]]\ntool = "z"\n', 12,
     "confirm rule 2 has no by"),
    ('[[defaults.confirm]]\ntool = "x"\nbye = "y"\n', 3, "unknown key 'bye' in confirm rule 1; did you mean 'by'?"),
    ('[[defaults.confirm]]\ntool = ""\nby = "y"\n', 2, "tool must be a non-empty tool glob"),
    ('[[defaults.confirm]]\ntool = "x"\nby = []\n', 3, "by must be a tool glob or a non-empty array"),
    ('[defaults.confirm]\ntool = "x"\nby = "y"\n', 1, "confirm must be an array of tables: write [[defaults.confirm]]"),
    ('[defaults]\nmax_turns = 1\n\n[service."checkout"]\n# nothing yet\n', 4, '[service."checkout"] names no check'),
    ("# only comments\n", 1, "names no check"),
    ("max_turns = 3\n", 1, "max_turns is outside any section"),
    ("[defualts]\nmax_turns = 3\n", 1, "unknown key 'defualts' at the top level; did you mean 'defaults'?"),
    ("[service]\nmax_turns = 3\n", 2, 'put max_turns under [service."NAME"]'),
    ('[defaults]\nmax_turns = 1\n[agent]\n', 3, '[agent] holds one section per agent name'),
    ('[defaults]\nnote = """\nmax_turns = 1\n"""\n', 2, "unknown key 'note'"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "fragment"), BAD)
def test_bad_policy_files_name_the_line(tmp_path, text, line, fragment):
    path = tmp_path / "policy.toml"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        load_policy(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message, message
    assert "\n" not in message


def test_unreadable_and_non_utf8_files(tmp_path):
    with pytest.raises(UserError, match=r"policy file .*missing.toml does not exist"):
        load_policy(tmp_path / "missing.toml")
    path = tmp_path / "latin1.toml"
    path.write_bytes(b"[defaults]\nmax_turns = 1\n# caf\xe9\n")
    with pytest.raises(UserError) as caught:
        load_policy(path)
    assert str(caught.value).startswith(f"{path}:3: not UTF-8")
