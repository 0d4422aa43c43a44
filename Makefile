# Every target bootstraps .venv itself; the stamp makes a second run instant.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: eval test check bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

eval: $(STAMP)
	$(BIN)/traceladder domain validate
	$(BIN)/traceladder run $(if $(MODEL),--model $(MODEL)) $(if $(CASE),--case $(CASE))

test: $(STAMP)
	$(BIN)/python -m pytest

check: $(STAMP)
	$(BIN)/ruff check traceladder tests bench
	$(BIN)/ruff format --check traceladder tests bench
	$(BIN)/mypy traceladder

bench: $(STAMP)
	$(BIN)/python bench/exporter_throughput.py
	$(BIN)/python bench/suite_walltime.py
	$(BIN)/python bench/evaluate_throughput.py
	$(BIN)/python bench/live_evaluate_throughput.py
	$(BIN)/python bench/extract_throughput.py
	$(BIN)/python bench/ingest_throughput.py
	$(BIN)/python bench/serve_throughput.py

clean:
	rm -rf $(VENV) traceladder.duckdb .pytest_cache .mypy_cache .ruff_cache
