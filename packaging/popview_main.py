"""Entry point of the bundled popview (PyInstaller runs this script)."""
from popview.cli import main

raise SystemExit(main())
