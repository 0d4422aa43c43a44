"""Agent frameworks' own shapes, each one module on top of the convention its instrumentation
writes (OpenInference, OpenLLMetry, OTel GenAI): what a framework puts where the base convention
does not look. Registered in `extract.conventions.registry._BUILTIN`, one line each."""
