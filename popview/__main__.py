from popview.cli import main

raise SystemExit(main())
