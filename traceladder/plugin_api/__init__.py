"""What a plug-in imports: one module per plug-in kind, the only traceladder names a plug-in
needs, kept stable (`tests/project/test_public_api.py` pins them). A plug-in that imports anything
else from traceladder depends on internals that may move without notice.

- `traceladder.plugin_api.rungs`: a rung module's inputs and results.
- `traceladder.plugin_api.conventions`: a `Convention` and what its hooks return.
- `traceladder.plugin_api.domains`: a `Domain` and its suite.
- `traceladder.plugin_api.formats`: a `ReportFormat` and what it renders.

How each kind registers and is opted into: docs/extending.md.
"""
