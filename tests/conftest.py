"""Test set-up: Qt offscreen, and the location of the shared real traces."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _isolate_user_directories() -> Path:
    """Every user directory (XDG config, data, state and cache: platformdirs and Qt's
    QSettings and QStandardPaths follow them) points into a temporary folder for the
    whole run, set before anything reads them: tests never touch the user's settings
    or caches. The caches' place is set too (POPVIEW_CACHE_DIR), and caches beside
    the traces are not asked for. numba's compiled kernels alone stay where popview
    keeps them (the user cache directory, or NUMBA_CACHE_DIR), else every run would
    compile them all again. The first-run compile helper is off (tests of it turn it on)."""
    if not os.environ.get("NUMBA_CACHE_DIR"):       # compiled kernels: the usual place, not compiled anew
        import platformdirs

        os.environ["NUMBA_CACHE_DIR"] = os.path.join(platformdirs.user_cache_dir("popview"), "numba")
    root = Path(tempfile.mkdtemp(prefix="popview-tests-home-"))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        folder = root / name.lower()
        folder.mkdir(mode=0o700)
        os.environ[name] = str(folder)
    os.environ["POPVIEW_CACHE_DIR"] = str(root / "popview-cache")
    os.environ.pop("POPVIEW_CACHE_BESIDE", None)
    os.environ["POPVIEW_PRECOMPILE"] = "0"          # no compile helper beside every command the tests run
    atexit.register(shutil.rmtree, root, True)
    return root


USER_DIRS = _isolate_user_directories()

SHARED_TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"


@pytest.fixture(scope="session")
def shared_traces() -> Path:
    """../shared/traces beside the repository, or skip with the reason."""
    if not SHARED_TRACES.is_dir():
        pytest.skip(f"real traces not available: {SHARED_TRACES} does not exist")
    return SHARED_TRACES


@pytest.fixture
def cache_dir(tmp_path) -> Path:
    d = tmp_path / "cache"
    d.mkdir()
    return d


@pytest.fixture(autouse=True)
def automatic_garbage_collection():
    """A window made by a test turns Python's automatic collection off for its GUI-thread
    collector (popview.gui.collector); the next test gets it back."""
    yield
    import sys

    if "popview.gui.collector" in sys.modules:
        sys.modules["popview.gui.collector"].uninstall()


@pytest.fixture
def spill_writes(monkeypatch):
    """The tables whose chunks went into the conversion's spill files (kept rows write none)."""
    from popview.cache import writer

    written = []
    real = writer._Staging._write

    def write(self, f, column, at):
        written.append(self.table)
        return real(self, f, column, at)

    monkeypatch.setattr(writer._Staging, "_write", write)
    return written


def pytest_configure(config):
    """The Ctrl-C tests send SIGINT to the test process and expect KeyboardInterrupt. A suite
    started in the background of a shell without job control (`cmd &` in a script, nohup)
    inherits SIGINT ignored, and Python then installs no handler: 13 of those tests failed
    with "DID NOT RAISE". Python's own handler is put back here."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
