"""`cases from-traces` for every producer that records the needed facts (issue 32), on real captures
(tests/fixtures/frameworks, tests/fixtures/producers), through the real CLI: the user's request and
the system prompt wherever the producer keeps them (span attributes, `gen_ai.system_instructions`,
span events, log records), `system_prompt.txt` written, definitions from the traces that become
cases, `--tools FILE` for a producer that records none — and `run --model sim:oracle` then passes
every recorded case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cli, cli_in_process

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _model_requests(capture: Path) -> list[dict]:
    return json.loads((capture / "model-requests.json").read_text())


def _sent_system_prompt(capture: Path) -> str:
    """The system prompt the framework really sent the model (the scripted server's record):
    a `system` message, or the Gemini API's `systemInstruction` parts."""
    first = _model_requests(capture)[0]
    if "systemInstruction" in first:
        return "".join(p["text"] for p in first["systemInstruction"]["parts"])
    return next(m["content"] for m in first["messages"] if m["role"] == "system")


def _record(tmp_path: Path, capture: Path, *args: str, refused: bool = False):
    """`cases from-traces` on the capture, ingested. A recording's subject is the suite it writes,
    read back from the files: in process. A refusal's subject is its exit code and one-line error:
    a real process."""
    db = tmp_path / "s.duckdb"
    files = sorted(str(p) for p in capture.glob("collector-*.jsonl"))
    assert (
        cli_in_process("ingest", "--db", str(db), "--processes", "1", *files).returncode == 0
    )  # set-up in one process: decision 801
    command = cli if refused else cli_in_process
    return command("cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "suite"), *args)


def _passes_offline(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    db = tmp_path / "run.duckdb"
    # The replay's verdict, read from the store, is what is checked: the run is in process.
    done = cli_in_process("run", "--domain", str(suite), "--cases", str(suite / "cases.jsonl"), "--db", str(db),
                          "--model", "sim:oracle")  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = cli_in_process(
        "sql", "SELECT verdict FROM case_results", "--db", str(db), "--json"
    )  # reads back
    assert json.loads(result.stdout) == [{"verdict": "PASS"}]


@pytest.mark.parametrize(
    ("capture", "args"),
    [
        # the request and the system prompt only in span events
        ("frameworks/strands/chain-plain", ()),
        # the system prompt in gen_ai.system_instructions; a second one-span create_agent trace
        # with other definitions, which becomes no case (no user request) and defines nothing
        ("frameworks/langgraph-openllmetry/chain-plain", ("--skip-bad",)),
        # JavaScript: the Vercel AI SDK's ai.prompt.messages / ai.prompt.tools / ai.response.toolCalls
        ("frameworks/vercel-ai/chain-plain", ()),
        ("frameworks/vercel-ai/chain-stream", ()),
        # Google GenAI (OTel GenAI through opentelemetry-instrumentation-google-genai)
        ("frameworks/google-genai/chain-plain", ()),
        ("frameworks/google-genai/chain-stream", ()),
        # LlamaIndex with OpenInference: everything on the LLM spans, plain and streamed
        ("frameworks/llamaindex/chain-plain", ()),
        ("frameworks/llamaindex/chain-stream", ()),
    ],
)
def test_a_framework_that_keeps_its_messages_off_the_input_messages_is_recorded_and_replays(
    tmp_path, capture, args
):
    path = FIXTURES / capture
    done = _record(tmp_path, path, *args)
    assert done.returncode == 0, done.stderr
    suite = tmp_path / "suite"
    (case,) = map(json.loads, (suite / "cases.jsonl").read_text().splitlines())
    expected = json.loads((path / "expected.json").read_text())
    assert case["instruction"] == expected["user_text"]
    assert (suite / "system_prompt.txt").read_text() == _sent_system_prompt(path)
    assert [(c["tool"], json.dumps(c["params"])) for c in case["golden"]["calls"]] == [
        (c["name"], c["arguments_raw"]) for c in expected["sent_calls"]
    ]
    _passes_offline(tmp_path)


def test_a_producer_that_records_no_definitions_is_told_the_option_then_recorded_with_it(tmp_path):
    path = FIXTURES / "frameworks/openai-agents-otel/chain-plain"
    refused = _record(tmp_path, path, refused=True)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    assert (
        "which no selected trace recorded a definition of; give its definition with --tools FILE"
        in refused.stderr
    )
    assert not (tmp_path / "suite").exists()
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(json.loads((path / "expected.json").read_text())["request_tools"]))
    done = _record(tmp_path, path, "--tools", str(tools))
    assert done.returncode == 0, done.stderr
    names = [t["function"]["name"] for t in json.loads((tmp_path / "suite" / "tools.json").read_text())]
    assert names == ["book_table", "get_time", "get_weather"]
    _passes_offline(tmp_path)


def test_the_system_prompt_of_log_records_is_written(tmp_path):
    """openai-v2 keeps the messages in OTel GenAI log records and records no definitions."""
    path = FIXTURES / "producers/otel-openai-v2-default/parallel"
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(_model_requests(path)[0]["tools"]))
    db = tmp_path / "s.duckdb"
    files = sorted(str(p) for p in path.glob("collector-*.jsonl"))
    assert (
        cli_in_process("ingest", "--db", str(db), "--processes", "1", *files).returncode == 0
    )  # set-up in one process: decision 801
    done = cli_in_process(
        "cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "suite"), "--tools", str(tools)
    )
    assert done.returncode == 0, done.stderr
    expected = json.loads((path / "expected.json").read_text())
    assert (tmp_path / "suite" / "system_prompt.txt").read_text() == expected["system_prompt"]
    _passes_offline(tmp_path)


def test_no_user_request_names_where_it_was_looked_for_and_the_way_out(tmp_path):
    path = FIXTURES / "frameworks/langgraph-openllmetry/chain-plain"
    refused = _record(tmp_path, path, refused=True)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "no user request recorded (the instruction of the case) in its span attributes, span events or log " \
           "records; select traces that record it (--trace, --where) or --skip-bad" in refused.stderr  # fmt: skip


@pytest.mark.parametrize("mode", ["plain", "stream"])
def test_bedrock_converse_records_with_its_tool_config_and_replays(tmp_path, mode):
    """The botocore instrumentation keeps the request and the system prompt in log records, as
    Converse content blocks (`[{"text": …}]`), and records no definitions: `--tools` with the
    application's own `toolConfig` supplies them."""
    path = FIXTURES / f"frameworks/bedrock-botocore/chain-{mode}"
    request = _model_requests(path)[0]
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(request["toolConfig"]))
    done = _record(tmp_path, path, "--tools", str(tools))
    assert done.returncode == 0, done.stderr
    suite = tmp_path / "suite"
    (case,) = map(json.loads, (suite / "cases.jsonl").read_text().splitlines())
    expected = json.loads((path / "expected.json").read_text())
    assert case["instruction"] == expected["user_text"]
    assert (suite / "system_prompt.txt").read_text() == request["system"][0]["text"]
    assert [(c["tool"], json.dumps(c["params"])) for c in case["golden"]["calls"]] == [
        (c["name"], c["arguments_raw"]) for c in expected["sent_calls"]
    ]
    _passes_offline(tmp_path)
