"""`traceladder ingest`: OTLP files (protobuf, OTLP/JSON, Collector JSON lines; gzip or not)."""
