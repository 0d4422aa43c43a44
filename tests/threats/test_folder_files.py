"""A domain folder is read like an archive: what it holds, never what it points at. A link out of
the folder is refused (its target is never read, so never sent to a model or stored), a FIFO, a
device or a socket is refused without waiting on it, and each file has a size limit — each one
clear line, exit 2. The same reader takes the files named on the command line (`--tools`,
`--cases`, a policy, a price table): a FIFO there is one line too, never a hang."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import cli

HANG = 60  # seconds: a hang detector, not a speed claim


def folder(tmp_path: Path) -> Path:
    out = tmp_path / "dom"
    out.mkdir()
    tool = {"type": "function", "function": {"name": "get_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}  # fmt: skip
    (out / "tools.json").write_text(json.dumps([tool]))
    (out / "domain.toml").write_text('read_only = ["get_order"]\nwhitelist = ["get_order"]\n')
    (out / "system_prompt.txt").write_text("You are a shop assistant.")
    return out


def validate(dom: Path):
    return cli("domain", "validate", "--domain", str(dom), timeout=HANG)


def test_a_link_out_of_the_folder_is_refused_and_never_read(tmp_path):
    dom = folder(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("THE-SECRET-TOKEN")
    (dom / "system_prompt.txt").unlink()
    (dom / "system_prompt.txt").symlink_to(secret)
    done = validate(dom)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "domain: system_prompt.txt is a link to a file outside the folder (never read)"
    )
    ran = cli("run", "--domain", str(dom), "--model", "sim:oracle", "--db", str(tmp_path / "r.duckdb"),
              timeout=HANG)  # fmt: skip
    assert ran.returncode == 2 and "outside the folder" in ran.stderr
    assert "THE-SECRET-TOKEN" not in ran.stdout + ran.stderr
    assert (
        not (tmp_path / "r.duckdb").exists()
        or b"THE-SECRET-TOKEN" not in (tmp_path / "r.duckdb").read_bytes()
    )


def test_a_link_inside_the_folder_is_read(tmp_path):
    dom = folder(tmp_path)
    (dom / "prompts").mkdir()
    (dom / "system_prompt.txt").rename(dom / "prompts" / "shop.txt")
    (dom / "system_prompt.txt").symlink_to(Path("prompts") / "shop.txt")
    assert validate(dom).returncode == 0


def test_a_cases_file_linking_out_of_the_folder_is_refused(tmp_path):
    dom = folder(tmp_path)
    (tmp_path / "elsewhere.jsonl").write_text("")
    (dom / "cases.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    done = validate(dom)
    assert done.returncode == 2
    assert "cases.jsonl is a link to a file outside the folder" in done.stderr.splitlines()[0]


@pytest.mark.parametrize("name", ["tools.json", "system_prompt.txt", "domain.toml"])
def test_a_fifo_in_the_folder_is_refused_without_waiting(tmp_path, name):
    dom = folder(tmp_path)
    (dom / name).unlink()
    os.mkfifo(dom / name)
    done = validate(dom)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        f"domain: {name} is not a regular file (a FIFO, device or socket is not read)"
    )


def test_a_file_over_its_limit_is_refused(tmp_path):
    dom = folder(tmp_path)
    (dom / "system_prompt.txt").write_bytes(b"x" * ((1 << 20) + 1))
    done = validate(dom)
    assert done.returncode == 2
    assert (
        done.stderr.splitlines()[0]
        == "domain: system_prompt.txt is larger than the 1 MB an input file may be"
    )


@pytest.mark.parametrize("option", ["--tools", "--cases", "--policy"])
def test_a_fifo_named_on_the_command_line_is_one_line(tmp_path, option):
    fifo = tmp_path / "input"
    os.mkfifo(fifo)
    db = tmp_path / "t.duckdb"
    args = ["evaluate", "--db", str(db), option, str(fifo), "--no-judge"]
    done = cli(*args, timeout=HANG)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not a regular file" in lines[0], done.stderr
