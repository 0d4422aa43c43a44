"""The receive stage: spans from anyone's agent — the OTLP/HTTP receiver (`receive/serve/`), OTLP files
(`receive/ingest/`), and spans read where they stay (`receive/span_sources/`)."""
