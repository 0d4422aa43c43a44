"""Rung 5: an LLM judge for the questions code cannot settle, asked only about the traces that
survived every code rung — cached, costed, traced, and itself measured (`selfcheck --judge`).

`rubric` (the versioned questions and the prompt), `trajectory` (what the judge sees, in one
canonical form that is also the cache key), `client` (one judgment from any OpenAI-compatible
server), `sim` (the deterministic `sim:judge`), `store` (the judgment cache and the judge's spans),
`phase` (judging the survivors of one evaluation under a budget), `meta` (the judge's agreement
with labels, and its rerun drift).
"""
