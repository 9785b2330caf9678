"""Entry point of the bundled popview (PyInstaller runs this script)."""
import sys

from popview.cache import sidecar

if sys.argv[1:2] == [sidecar.WORKER_FLAG]:     # the derived-data process of a big conversion
    raise SystemExit(sidecar.serve())

from popview.cli import main  # noqa: E402

raise SystemExit(main())
