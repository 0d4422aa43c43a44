"""What the commands do, as library functions: each composes storage, the evaluation layer, the
agent and reporting, and fails with a typed error. `cli/` only parses arguments and prints.

A module here names the I/O it adds to a pure module in `report/` (`gate_run` reads the run
and the baseline file `report.gate` decides on; `report_files` loads and saves what
`report.build` builds), so no name is shared between the two. The run, evaluate and watch
workflows live with their components: `produce/agent/runner.py`, `evaluate/passes.py`,
`workflows/watch.py` (docs/architecture.md).
"""
