"""Derived data built in a second process gives the same cache as in one process."""
from __future__ import annotations

import sys

import h5py
import hdf5plugin  # noqa: F401  (filters for reading the caches)
import numpy as np
import pytest

import popview
from popview.cache import overview, sidecar
from popview.testing import synthetic


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("sidecar")
    synthetic.write(d / "h.prv", synthetic.Shape(processes=2, threads=2, iterations=5, work_ns=1_000_000,
                                                 rank_weights=(1.0, 1.4)))
    return d / "h.prv"


def _convert(trace, cache_dir, monkeypatch, min_rows, timeline=True):
    """The side process builds a share of the timeline overview: converted with it."""
    monkeypatch.setattr(sidecar, "MIN_ROWS", min_rows)
    exp = popview.open(trace, cache_dir=cache_dir, force=True, timeline=timeline)
    exp.close()
    return exp.reader.path


def _datasets(group: h5py.Group, prefix: str = "") -> dict:
    found = {}
    for name, item in group.items():
        if isinstance(item, h5py.Group):
            found.update(_datasets(item, f"{prefix}{name}/"))
        else:
            found[prefix + name] = item[()]
    return found


@pytest.mark.parametrize("share", ["all", "counters", "other"])
def test_parallel_build_equals_sequential(trace, tmp_path, monkeypatch, share):
    """Whichever share of the pyramid the side process builds."""
    from popview.cache import derived

    monkeypatch.setattr(derived, "_side_share", lambda src, defs, calls_estimate=None: share)
    started = []
    start_early = derived.start_early
    monkeypatch.setattr(derived, "start_early", lambda *a: started.append(start_early(*a)) or started[-1])
    one = _convert(trace, tmp_path / "one", monkeypatch, 10 ** 12)
    two = _convert(trace, tmp_path / "two", monkeypatch, 0)
    # the counters read only the events, which arrived in time order: given before the sort
    assert [s is not None for s in started] == [share == "counters"]
    with h5py.File(one) as a, h5py.File(two) as b, h5py.File(overview.path_of(one)) as ta, \
            h5py.File(overview.path_of(two)) as tb:
        assert "pyramid" not in a and "pyramid" not in b, "the pyramid lives in the companion file"
        assert any(name.startswith("counter_") for name in ta["pyramid"]), "the trace must have counters"
        for group, fa, fb in (("pyramid", ta, tb), ("cumulative", a, b)):
            da, db = _datasets(fa[group]), _datasets(fb[group])
            assert da.keys() == db.keys() and da
            for name in da:
                np.testing.assert_array_equal(da[name], db[name], err_msg=f"{group}/{name}")
            assert dict(fa[group].attrs) == dict(fb[group].attrs)
    assert not list((tmp_path / "two").glob("*.part")), "side files must be removed"


def test_without_the_timeline_no_side_process_is_started(trace, tmp_path, monkeypatch, started):
    """Without the timeline overview the derived data are the cumulative sums alone: a
    second interpreter would only wait for them (see docs/cache.md)."""
    from popview.cache import writer as writer_module

    monkeypatch.setattr(writer_module, "SIDE_AT_START_BYTES", 1)
    path = _convert(trace, tmp_path / "plain", monkeypatch, 0, timeline=False)
    assert started == []
    with h5py.File(path) as f:
        assert "cumulative" in f and "pyramid" not in f
    assert not overview.path_of(path).exists()


def test_a_dead_child_fails_the_conversion_and_leaves_no_cache(trace, tmp_path, monkeypatch):
    monkeypatch.setattr(sidecar, "worker_command", lambda: [sys.executable, "-c", "pass"])
    with pytest.raises(RuntimeError, match="derived-data process ended without a result"):
        _convert(trace, tmp_path / "dead", monkeypatch, 0)
    assert not [p for p in (tmp_path / "dead").iterdir() if p.suffix in (".h5", ".tmp", ".part")]


def test_a_failing_builder_is_reported_with_its_error(trace, tmp_path, monkeypatch):
    from popview.cache import derived

    monkeypatch.setattr(derived, "optional_builders", lambda: ["popview.cache.cumulative", "popview.cache.schema"])
    with pytest.raises(RuntimeError, match="AttributeError.*build"):      # the child's error, reported here
        _convert(trace, tmp_path / "bad", monkeypatch, 0)


@pytest.fixture
def started(monkeypatch):
    """The child processes started, in order."""
    procs = []
    real_init = sidecar.SideBuilder.__init__

    def remember(self):
        real_init(self)
        procs.append(self._proc)

    monkeypatch.setattr(sidecar.SideBuilder, "__init__", remember)
    return procs


def test_cancel_while_both_processes_build_stops_the_child_and_leaves_nothing(trace, tmp_path, monkeypatch, started):
    import threading

    from popview.cache import Cancelled

    monkeypatch.setattr(sidecar, "MIN_ROWS", 0)
    cancel = threading.Event()

    def progress(fraction, message):
        if "cumulative" in message:      # this process is building while the child is
            cancel.set()

    with pytest.raises(Cancelled):
        popview.open(trace, cache_dir=tmp_path / "cancelled", progress=progress, cancel=cancel, force=True,
                     timeline=True)
    assert started and all(p.poll() is not None for p in started), "the child must not outlive a cancel"
    assert not list((tmp_path / "cancelled").iterdir()), "no cache, side file or scratch left"


def test_a_large_source_starts_the_child_with_the_conversion(trace, tmp_path, monkeypatch, started):
    """It is started before any record is read, used by finish(), and stopped by a failure."""
    from popview.cache import writer as writer_module

    monkeypatch.setattr(writer_module, "SIDE_AT_START_BYTES", 1)
    monkeypatch.setattr(sidecar, "MIN_ROWS", 10 ** 12)       # finish() alone would not start one
    one = _convert(trace, tmp_path / "one", monkeypatch, 10 ** 12)
    assert len(started) == 1 and started[0].poll() is not None, "started once, and ended"
    with h5py.File(one) as f, h5py.File(overview.path_of(one)) as t:
        assert "pyramid" in t and "cumulative" in f
    w = writer_module.Writer(tmp_path / "x.h5", "fp", source_bytes=10, timeline=True)
    assert len(started) == 2 and started[1].poll() is None
    with pytest.raises(ValueError):
        with w:
            raise ValueError("bad input")
    assert started[1].wait(timeout=10) is not None


def test_sigterm_ends_the_child_at_once_even_inside_a_long_c_call(tmp_path):
    """The derived-data child is ended by SIGTERM (its parent's death sends one) while it runs
    a long call that holds the interpreter (a kernel, a compile, an HDF5 write): it must not
    outlive its parent holding the parent's stderr open."""
    import signal
    import subprocess
    import time

    code = ("import sys; from popview.cache import sidecar; sidecar._end_with_parent(); "
            "print('ready', flush=True); sum(range(10**12))")
    env = {k: v for k, v in __import__("os").environ.items() if k != sidecar.PARENT_ENV}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.2)                      # inside sum(): one C call, no bytecode boundary
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == -signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_as_the_child_starts_leaves_no_child(monkeypatch):
    """Ctrl-C (SIGINT to the main thread) just as the child process has been started, before
    the SideBuilder holding it exists: nobody could stop it, its pipes stayed open and it
    waited for jobs. It is stopped and waited for, its pipes closed, and the interrupt raised."""
    import signal
    import subprocess
    import threading

    started = []
    real = subprocess.Popen

    def popen(*args, **kwargs):
        proc = real(*args, **kwargs)
        started.append(proc)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)     # the child runs already
        return proc

    monkeypatch.setattr(sidecar.subprocess, "Popen", popen)
    with pytest.raises(KeyboardInterrupt):
        sidecar.SideBuilder()
    assert len(started) == 1
    assert started[0].poll() is not None, "the child still runs"
    assert started[0].stdin.closed and started[0].stdout.closed
