from traceladder.cli.entry import entry

raise SystemExit(entry())
