"""`traceladder serve`: an OTLP/HTTP receiver that writes durable segments beside the store."""
