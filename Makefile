# Every target bootstraps .venv itself and installs only what it needs; a stamp per install makes
# a second run instant. `eval` needs the core (~360 MB); `test`, `check` and `bench` need the dev
# extras (~1.4 GB: chdb, Playwright and Dask, whose tests run in CI too). The dev install is a
# superset of the core, so it stamps both.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
DEV := $(VENV)/.installed-dev

.PHONY: eval eval-fc test test-frameworks check bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(CORE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $(CORE)

$(DEV): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(CORE) $(DEV)

# The name every target used before the split: the full development install.
$(VENV)/.installed: $(DEV)
	touch $@

eval: $(CORE)
	$(BIN)/traceladder domain validate
	$(BIN)/traceladder run $(if $(MODEL),--model $(MODEL)) $(if $(CASE),--case $(CASE))
	$(BIN)/traceladder report --format html

# Seed 1's entry point: `make eval-fc [CASE=<id>] [MODEL=<model>] [PYTHON=/path/to/python]`.
# Validates the domain and the case suite, runs the agent (default sim:faulty), judges the traces
# offline, writes the schema-validated ReportV1, prints `traceladder run`'s lines, then
#   raw_run=<the DuckDB store holding the run's spans>
#   report_path=<the ReportV1 file>
#   eval_fc=passed
# A case FAIL or AGENT_ERROR is an outcome; an unknown case, bad configuration, a runner failure
# or an invalid report exits non-zero without `eval_fc=passed`. PYTHON= uses that interpreter (with
# traceladder installed) instead of bootstrapping .venv.
ifdef PYTHON
FC_PY := $(PYTHON)
FC_DEPS :=
else
FC_PY := $(BIN)/python
FC_DEPS := $(CORE)
endif

eval-fc: $(FC_DEPS)
	@$(FC_PY) -m traceladder domain validate
	@$(FC_PY) -m traceladder cases validate
	@out=$$($(FC_PY) -m traceladder run $(if $(MODEL),--model $(MODEL)) $(if $(CASE),--case $(CASE))) \
		|| exit $$?; \
	printf '%s\n' "$$out"; \
	db=$$(printf '%s\n' "$$out" | sed -n 's/^db=//p'); \
	case "$$db" in /*) ;; *) db="$$(pwd)/$$db" ;; esac; \
	report=$$(printf '%s\n' "$$out" | sed -n 's/^report_path=//p'); \
	if [ -z "$$report" ] || [ ! -s "$$report" ]; then echo "eval-fc: no report was written" >&2; exit 1; fi; \
	printf 'raw_run=%s\nreport_path=%s\neval_fc=passed\n' "$$db" "$$report"

# The suite in parallel (pytest-xdist): one worker per core and one more, because a test spends
# ~8% of its time waiting on a child process, a server or a socket (2 cores, the same main:
# 10m12s with two workers, 9m24s with three; decision 596); worksteal rebalances the tail, where
# one long test module would otherwise run alone. `make test PYTEST_ARGS=` runs it in one process;
# a plain `python -m pytest …` is unchanged (one process, no xdist flags).
TEST_WORKERS := $(shell $(PY) -c "import os; print(len(os.sched_getaffinity(0)) + 1)")
PYTEST_ARGS ?= -n $(TEST_WORKERS) --dist worksteal

# Our modules' bytecode first: with PYTHONDONTWRITEBYTECODE set (this machine sets it), every
# `traceladder` process a test starts would compile them from source again, as no installed
# package does (pip compiles at install) — measured 3% of the suite's CPU.
test: $(DEV)
	$(BIN)/python -m compileall -q traceladder
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The example agents of frameworks traceladder does not depend on (pydantic-ai, LangGraph), each
# installed by the test into a throwaway directory: a step of its own in CI (decision 265).
test-frameworks: $(DEV)
	$(BIN)/python -m pytest -m frameworks tests/subject/test_framework_agents.py

check: $(DEV)
	$(BIN)/ruff check traceladder tests bench
	$(BIN)/ruff format --check traceladder tests bench
	$(BIN)/mypy traceladder

# Every bench script (bench/*.py with a __main__ block) in one run, then one table: measure, figure,
# in-run baseline, ratio, load average. `make bench BENCH_ARGS=--smoke` runs each at its tiny size.
bench: $(DEV)
	$(BIN)/python bench/run_all.py $(BENCH_ARGS)
	$(if $(findstring --smoke,$(BENCH_ARGS)),,$(BIN)/python -m pytest -m scale tests/scale/test_commands_at_scale.py)

clean:
	rm -rf $(VENV) traceladder.duckdb .pytest_cache .mypy_cache .ruff_cache
