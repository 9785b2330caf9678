"""Input formats. Each reader module knows one format and nothing else:

    detect(path) -> bool
    convert(path, writer, progress) -> Definitions   (streams records into writer)

Adding a format = adding a module and one line in READERS.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from popview.readers.errors import InputError
from popview.readers.files import regular_file

# (format name, module) in detection order.
READERS = [
    ("paraver", "popview.readers.paraver"),
    ("otf2", "popview.readers.otf2"),
    ("cube", "popview.readers.cube"),
]


def reader_for(path: Path):
    """(format name, reader module) for `path`, or InputError saying why not."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if not path.is_dir():
        regular_file(path)          # devices, pipes and sockets are never read
    for name, module in READERS:
        mod = importlib.import_module(module)     # a reader missing from the install is an error naming it
        detect = getattr(mod, "detect", None)
        if detect is not None and detect(path):
            return name, mod
    what = "a directory without a trace or profile" if path.is_dir() else "not a Paraver, OTF2 or Cube file"
    raise InputError(f"{path}: {what}")


__all__ = ["InputError", "READERS", "reader_for"]
