"""`traceladder domain validate` on the shipped files and on broken temporary copies."""

from __future__ import annotations

import json
import shutil
from importlib import resources

from tests.conftest import cli


def copy_data(tmp_path):
    src = resources.files("traceladder.suite.domain.retail") / "data"
    for name in ("tools.json", "fixtures.json", "policy.json", "system_prompt.txt"):
        shutil.copyfile(str(src / name), tmp_path / name)
    return tmp_path


def test_shipped_domain_validates(retail):
    result = cli("domain", "validate")
    assert result.returncode == 0, result.stderr
    assert "domain_validation=passed" in result.stdout
    assert len(retail.tools) == 13


def test_broken_schema_is_caught(tmp_path):
    data = copy_data(tmp_path)
    tools = json.loads((data / "tools.json").read_text())
    tools[0]["function"]["parameters"]["properties"]["user_id"]["type"] = "strang"
    tools[1]["function"]["parameters"].pop("additionalProperties")
    (data / "tools.json").write_text(json.dumps(tools))
    result = cli("domain", "validate", "--data-dir", str(data))
    assert result.returncode == 2
    assert "get_user: parameters schema is not valid JSON Schema 2020-12" in result.stderr
    assert "get_order: parameters: object schema must set additionalProperties: false" in result.stderr


def test_tool_count_and_openai_shape_are_checked(tmp_path):
    data = copy_data(tmp_path)
    tools = json.loads((data / "tools.json").read_text())
    tools[2]["function"]["name"] = "list orders!"
    (data / "tools.json").write_text(json.dumps(tools[:12]))
    result = cli("domain", "validate", "--data-dir", str(data))
    assert result.returncode == 2
    assert "expected exactly 13 tools, found 12" in result.stderr
    assert "tools[2]: not a valid OpenAI function tool at 'function/name'" in result.stderr
    assert "confirmation tool 'abort_action' is not a defined tool" in result.stderr


def test_dangling_fixture_reference_is_caught(tmp_path):
    data = copy_data(tmp_path)
    fixtures = json.loads((data / "fixtures.json").read_text())
    fixtures["orders"][0]["user_id"] = "U199"
    fixtures["orders"][1]["items"][0]["product_id"] = "P299"
    (data / "fixtures.json").write_text(json.dumps(fixtures))
    result = cli("domain", "validate", "--data-dir", str(data))
    assert result.returncode == 2
    assert "orders.W441: user_id 'U199' is not a user" in result.stderr
    assert "orders.W442: item product_id 'P299' is not a product" in result.stderr


def test_missing_data_file_is_a_one_line_error(tmp_path):
    result = cli("domain", "validate", "--data-dir", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "lacks tools.json" in result.stderr


def test_whitelist_must_name_read_only_tools(retail):
    from dataclasses import replace

    from traceladder.suite.domain.validate import validate_domain

    broken = replace(retail, default_whitelist=("get_user", "request_cancel"))
    assert validate_domain(broken) == ["whitelist: 'request_cancel' is not a read-only tool"]
