from flowc.cli import main

raise SystemExit(main())
