"""The conversion's finish modules (h5py, hdf5plugin, the derived builders: 40-70 ms) are
imported from the first records appended, by a thread, while the parse threads work and
the reader hands them blocks, not before the parse starts (writer.FINISH_MODULES): the
Paraver reader and the writer's staging import no HDF5."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import sys, tempfile
from pathlib import Path
import numpy as np
import popview.readers.paraver.stream
from popview.cache.writer import FINISH_MODULES, Writer
before = sorted(m for m in ("h5py", "hdf5plugin") if m in sys.modules)
with tempfile.TemporaryDirectory() as tmp:
    with Writer(Path(tmp) / "c.h5", "") as w:
        print(before, sorted(m for m in ("h5py", "hdf5plugin") if m in sys.modules))
        w.append("states", {"loc": np.zeros(3, np.int32), "begin": np.arange(3), "end": np.arange(3) + 1,
                            "state": np.ones(3, np.int32)})
        print(w._imports.name)
        w._imported()
        print(all(m in sys.modules for m in FINISH_MODULES))
        w.abort()
"""


def test_the_reader_and_staging_import_no_hdf5_until_the_first_records():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines == ["[] []", "popview-imports", "True"], out.stdout


def test_a_finish_module_that_cannot_be_imported_fails_the_finish(tmp_path, monkeypatch):
    """Its thread says nothing: the finish imports it again and raises its error, and no
    thread outlives the conversion."""
    import threading

    import numpy as np
    import pytest

    from popview.cache import writer

    monkeypatch.setattr(writer, "FINISH_MODULES", writer.FINISH_MODULES + ("popview.no_such_module",))
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        with writer.Writer(tmp_path / "c.h5", "") as w:
            w.append("states", {"loc": np.zeros(3, np.int32), "begin": np.arange(3), "end": np.arange(3) + 1,
                                "state": np.ones(3, np.int32)})
            w.finish()
    assert not [t for t in threading.enumerate() if t.name == "popview-imports"]


HASHED_FIRST = r"""
import sys
from popview import experiment
seen = []
real = experiment.fingerprint


def hashed(*args, **kwargs):
    seen.append("numpy" in sys.modules)
    return real(*args, **kwargs)


experiment.fingerprint = hashed
experiment.convert(sys.argv[1], sys.argv[2], force=True)
print(seen[:1])
"""


def test_the_sources_are_hashed_while_numpy_and_the_writer_are_imported(tmp_path):
    """The fingerprint's thread starts before the conversion imports numpy and the writer (50
    ms on one core), not after them, when it competed with the two parse threads."""
    from popview.testing import synthetic

    synthetic.write(tmp_path / "t.prv", synthetic.Shape(processes=2, threads=1, iterations=5, work_ns=500_000))
    out = subprocess.run([sys.executable, "-c", HASHED_FIRST, str(tmp_path / "t.prv"), str(tmp_path / "cache")],
                         capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[False]", out.stdout
