"""What the commands do, as library functions: each composes storage, the evaluation layer, the
agent and reporting, and fails with a typed error. `cli/` only parses arguments and prints.

A module here names the I/O it adds to a pure module in `reporting/` (`gate_run` reads the run
and the baseline file `reporting.gate` decides on; `report_files` loads and saves what
`reporting.build` builds), so no name is shared between the two. The run, evaluate and watch
workflows live with their components: `agent/runner.py`, `evaluation/evaluate.py`,
`live/watch.py` (docs/architecture.md).
"""
