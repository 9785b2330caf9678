"""A toy fourth format, to prove the reader boundary: a CSV of states.

    # popview toy states
    process,thread,begin_ns,end_ns,state
    0,0,0,900,1
    ...

State codes are popview's (1 running, 3 waiting a message, ...). The whole
format is this package; `popview.readers.register("tests.toy_format")` is the
one line that makes popview read it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from popview.model.definitions import Definitions, Location, Process
from popview.readers.errors import InputError
from popview.readers.format import Format

HEADER = "# popview toy states"
FORMAT = Format("toy-states", "toy states CSV", ("*.states.csv",), "a toy states CSV (.states.csv)",
                name_suffixes=(".states.csv",))


def detect(path) -> bool:
    path = Path(path)
    if not path.is_file() or not path.name.endswith(".states.csv"):
        return False
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.readline().strip() == HEADER


def anchor(path) -> Path:
    return Path(path)


def source_files(anchor: Path) -> list[Path]:
    return [Path(anchor)]


def convert(path, writer, progress):
    rows = _rows(Path(path))
    procs = rows[:, 0]
    pairs, loc = np.unique(rows[:, :2], axis=0, return_inverse=True)
    defs = Definitions(source_format=FORMAT.name, tool="toy", t_end=int(rows[:, 3].max()))
    defs.nodes = ["node0"]
    defs.processes = [Process(name=f"process {p}", node=0, rank=int(p)) for p in np.unique(procs)]
    index = {int(p): i for i, p in enumerate(np.unique(procs))}
    defs.locations = [Location(name=f"{p}.{t}", process=index[int(p)], thread=int(t)) for p, t in pairs]
    order = np.lexsort((rows[:, 2], loc))
    writer.append("states", {"loc": loc[order].astype(np.int32), "begin": rows[order, 2], "end": rows[order, 3],
                             "state": rows[order, 4].astype(np.int32)})
    writer.set_definitions(defs)
    progress(1.0, "states read")
    return defs


def _rows(path: Path) -> np.ndarray:
    try:
        rows = np.loadtxt(path, delimiter=",", skiprows=2, dtype=np.int64, ndmin=2)
    except ValueError as exc:
        raise InputError(f"{path}: not a toy states CSV ({exc})") from None
    if rows.shape[1] != 5 or len(rows) == 0:
        raise InputError(f"{path}: expected rows of process,thread,begin_ns,end_ns,state")
    return rows
