from traceladder.cli.main import main

raise SystemExit(main())
