"""A Paraver conversion's threads (the spill writes, the parse blocks and their reader,
the sort's read-ahead and call-path consumer, the fingerprint, the write-back) when
something goes wrong in one of them or the user stops it: the error reaches the caller
with its message, no thread outlives the conversion, nothing is left in the cache
folder and no deadlock (every conversion here runs under a deadline)."""
from __future__ import annotations

import errno
import os
import signal
import threading
import time

import numpy as np
import pytest

import popview
from popview.cache import CacheUnwritable, writer
from popview.cache.progress import Cancelled
from popview.testing import synthetic

DEADLINE = 60       # seconds: a conversion of the small trace takes well under one


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("thread-faults")
    synthetic.write(d / "t.prv", synthetic.Shape(processes=4, threads=2, iterations=30, work_ns=1_000_000))
    with popview.open(d / "t.prv", cache_dir=d / "warm"):        # the process-wide pools exist now
        pass
    return d / "t.prv"


def _lasting() -> set[threading.Thread]:
    return set(threading.enumerate())


def _outliving(before: set[threading.Thread]) -> list[str]:
    """The threads started since `before` that are still alive (the compression pool is
    the process's, started by the warm-up)."""
    return sorted(t.name for t in threading.enumerate() if t not in before and t.is_alive())


def _nothing_left(before: set[threading.Thread], cache_dir) -> None:
    """No thread of the conversion alive, nothing in its cache folder."""
    assert _outliving(before) == []
    assert os.listdir(cache_dir) == []


def _fails(trace, cache_dir, **options) -> BaseException:
    """The conversion's exception, raised in a thread of its own under DEADLINE (a hung
    conversion fails the test instead of the suite)."""
    caught: list[BaseException] = []

    def run():
        try:
            popview.open(trace, cache_dir=cache_dir, **options).close()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            caught.append(exc)

    runner = threading.Thread(target=run, name="test-conversion", daemon=True)
    runner.start()
    runner.join(DEADLINE)
    assert not runner.is_alive(), "the conversion hung"
    assert caught, "the conversion did not fail"
    return caught[0]

def _stopped_at(trace, cache_dir, phase: str, how: str, *, check=lambda: None) -> None:
    """Converts `trace`, cancelled (how="cancel") or interrupted (Ctrl-C) when the progress
    reaches `phase`; checks it stopped so, then `check()`, and left no thread nor file."""
    cancel = threading.Event()
    seen = []

    def progress(fraction, text):
        seen.append(text)
        if text.startswith(phase):
            if how == "cancel":
                cancel.set()
            else:
                raise KeyboardInterrupt("stopped")

    before = _lasting()
    exc = _fails(trace, cache_dir, progress=progress, cancel=cancel)
    assert isinstance(exc, Cancelled if how == "cancel" else KeyboardInterrupt), (exc, seen)
    check()
    _nothing_left(before, cache_dir)



@pytest.fixture
def small_groups(monkeypatch):
    """Sort groups of a few hundred rows: the read-ahead and call-path threads run."""
    monkeypatch.setattr(writer, "SORT_BUDGET_ROWS", 400)


def _on_call(n: int, failure: BaseException):
    """A stand-in failing at its n-th call, else calling `real`."""
    calls = [0]

    def wrap(real):
        def run(*args, **kwargs):
            calls[0] += 1
            if calls[0] == n:
                raise failure
            return real(*args, **kwargs)
        return run
    return wrap


def test_a_failed_read_ahead_is_raised_with_its_message(trace, tmp_path, monkeypatch, small_groups):
    reads_in_thread = []
    real = writer._Staging.gather

    def gather(self, runs, a, b):
        reads_in_thread.append(threading.current_thread().name)
        if len(reads_in_thread) == 3:
            raise OSError(errno.EIO, "disk read error in the read-ahead")
        return real(self, runs, a, b)

    monkeypatch.setattr(writer._Staging, "gather", gather)
    before = _lasting()
    exc = _fails(trace, tmp_path / "cache")
    assert "disk read error in the read-ahead" in str(exc)
    assert any(name.startswith("popview-read") for name in reads_in_thread[:3])
    _nothing_left(before, tmp_path / "cache")


def test_a_failed_call_path_thread_is_raised_with_its_message(trace, tmp_path, monkeypatch, small_groups):
    from popview.cache import derived

    monkeypatch.setattr(derived.CallPathCollector, "add",
                        _on_call(2, ValueError("call-path kernel failed"))(derived.CallPathCollector.add))
    before = _lasting()
    exc = _fails(trace, tmp_path / "cache")
    assert isinstance(exc, ValueError) and "call-path kernel failed" in str(exc)
    _nothing_left(before, tmp_path / "cache")


def test_a_full_disk_in_the_spill_thread_leaves_no_thread(trace, tmp_path, monkeypatch):
    from popview.readers.paraver import stream

    monkeypatch.setattr(stream, "KEEP_TEXT_BYTES", 0)       # spilled, as a large trace is (not kept in memory)
    monkeypatch.setattr(writer, "_pwrite_all", _on_call(2, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))(
        writer._pwrite_all))
    before = _lasting()
    exc = _fails(trace, tmp_path / "cache")
    assert isinstance(exc, CacheUnwritable) and "No space left on device" in str(exc)
    _nothing_left(before, tmp_path / "cache")


def test_a_reader_thread_that_dies_unexpectedly_is_an_error_not_a_hang(trace, tmp_path, monkeypatch):
    """The parse's block reader hands its blocks through a bounded queue: a failure it did
    not foresee (here a MemoryError) must still end the consumer's wait."""
    from popview.readers.paraver import stream

    def broken(*args, **kwargs):
        raise MemoryError("no memory for a block")
        yield  # pragma: no cover - a generator, as the real one

    monkeypatch.setattr(stream, "_mapped_block_items", broken)
    before = _lasting()
    exc = _fails(trace, tmp_path / "cache")
    assert "no memory for a block" in str(exc)
    _nothing_left(before, tmp_path / "cache")


def test_a_write_back_thread_does_not_outlive_a_failed_conversion(trace, tmp_path, monkeypatch):
    """The derived data fail while the tables' pages are written back by a thread."""
    from popview import atomic
    from popview.cache import cumulative, derived

    syncing, real = threading.Event(), atomic.sync_path

    def slow_sync(path):
        syncing.set()
        time.sleep(1.0)
        real(path)

    def fails(*args, **kwargs):
        syncing.wait(5)
        raise ValueError("derived data failed")

    monkeypatch.setattr(writer.atomic, "sync_path", slow_sync)
    monkeypatch.setattr(derived, "build_all", fails)
    monkeypatch.setattr(cumulative.Ahead, "write", fails)     # the default finish's sums (writer._sums_beside_calls)
    before = _lasting()
    exc = _fails(trace, tmp_path / "cache")
    assert "derived data failed" in str(exc)
    _nothing_left(before, tmp_path / "cache")


@pytest.mark.parametrize("phase, how", [(phase, how) for phase in ("parsing", "sorting events", "writing call paths",
                                                                    "cumulative sums", "sealing the cache")
                                        for how in ("cancel", "interrupt")])
def test_stopped_in_any_phase_leaves_no_thread_and_nothing_behind(trace, tmp_path, small_groups, phase, how):
    """The window's cancel (an Event) or Ctrl-C / SIGTERM (a KeyboardInterrupt) at each phase,
    until the cache is sealed (a cancel after the cumulative sums was not seen: the conversion
    completed)."""
    _stopped_at(trace, tmp_path / "cache", phase, how)


@pytest.mark.parametrize("at", ["seal", "keep_if_still_valid"])
def test_a_cancel_until_the_rename_leaves_no_cache_and_the_old_one_as_it_was(trace, tmp_path, monkeypatch, at):
    """Cancel pressed while the finished cache is sealed (hashed whole: a second on a large
    trace), or as its companions are settled, just before the rename: the analyst asked for
    no cache, so there is none (a cache converted before stays as it was, its companions
    too), and the conversion says it was cancelled. It used to complete."""
    from popview.cache import companion, integrity, overview

    cache_dir = tmp_path / "cache"
    with popview.open(trace, cache_dir=cache_dir, timeline=True) as exp:
        old = exp.cache_path
    kept = sorted((p.name, p.stat().st_ino, p.stat().st_mtime_ns) for p in cache_dir.iterdir())
    assert overview.path_of(old).exists()
    cancel = threading.Event()
    module = integrity if at == "seal" else companion     # the writer imports seal when it seals
    real = getattr(module, at)
    monkeypatch.setattr(module, at, lambda *a, **k: cancel.set() or real(*a, **k))
    before = _lasting()
    exc = _fails(trace, cache_dir, progress=lambda fraction, text: None, cancel=cancel, force=True)
    assert isinstance(exc, Cancelled) and str(exc) == "cancelled by the user", exc
    assert cancel.is_set()
    assert _outliving(before) == []
    assert sorted((p.name, p.stat().st_ino, p.stat().st_mtime_ns) for p in cache_dir.iterdir()) == kept
    monkeypatch.undo()
    new = tmp_path / "new"
    cancel.clear()
    monkeypatch.setattr(module, at, lambda *a, **k: cancel.set() or real(*a, **k))
    exc = _fails(trace, new, progress=lambda fraction, text: None, cancel=cancel)
    assert isinstance(exc, Cancelled)
    _nothing_left(before, new)


def test_spill_writes_waited_for_by_an_interrupted_caller_still_finish_before_the_files_close(tmp_path):
    """Ctrl-C while the caller waits for a write (the main thread's wait is interrupted):
    the write goes on in its thread, so the staging must still wait for it before closing
    its file, whose descriptor could be another file's by then."""
    spill = writer.SpillWrites()
    spill.AHEAD = 0                               # each write is waited for at once
    main = threading.main_thread().ident
    fd_after: list = []
    real = writer._pwrite_all

    def slow(fd, data, offset):
        signal.pthread_kill(main, signal.SIGINT)  # the waiting main thread is interrupted
        time.sleep(0.5)
        try:
            fd_after.append(os.fstat(fd).st_ino)
        except OSError as exc:
            fd_after.append(exc.errno)
        real(fd, data, offset)

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("needs the main thread")
    path = tmp_path / "column"
    f = open(path, "w+b")
    ino = os.fstat(f.fileno()).st_ino
    spill.write(f.fileno(), np.zeros(4, np.int64), 0)     # its thread runs: the next wait is for the write
    spill.drain()
    old = writer._pwrite_all
    writer._pwrite_all = slow
    try:
        with pytest.raises(KeyboardInterrupt):
            spill.write(f.fileno(), np.zeros(4, np.int64), 0)
            time.sleep(2)                         # the interrupt lands here at the latest
        spill.settle()                            # what _Staging.close does before closing
        f.close()
        other = open(tmp_path / "other", "w+b")   # may take the closed descriptor's number
        spill.close()
        other.close()
    finally:
        writer._pwrite_all = old
    assert fd_after == [ino], "a spill write ran after its file was closed"


@pytest.mark.parametrize("how", ["cancel", "interrupt"])
def test_stopped_while_the_derived_data_process_works_leaves_no_thread(trace, tmp_path, monkeypatch, how):
    """With the timeline overview built by the derived-data process (its jobs written by a
    thread of their own): stopped once the derived data are under way."""
    from popview.cache import sidecar

    monkeypatch.setattr(sidecar, "MIN_ROWS", 0)
    started, real = [], sidecar.SideBuilder.submit

    def submit(self, *args, **kwargs):
        started.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(sidecar.SideBuilder, "submit", submit)
    cancel, seen = threading.Event(), []

    def progress(fraction, text):
        seen.append(text)
        if any(t.startswith("writing call paths") for t in seen[:-1]):
            if how == "cancel":
                cancel.set()
            else:
                raise KeyboardInterrupt("stopped")

    before = _lasting()
    exc = _fails(trace, tmp_path / "cache", progress=progress, cancel=cancel, timeline=True)
    assert isinstance(exc, Cancelled if how == "cancel" else KeyboardInterrupt), (exc, seen)
    assert started, "no job went to the derived-data process"
    _nothing_left(before, tmp_path / "cache")


def test_the_same_trace_converted_twice_at_once_gives_one_sound_cache(trace, tmp_path):
    """The window converts in threads: two conversions of one trace at once (the second
    forced, so that it replaces the first's cache while that one's pages may still be
    written back and released by threads) both end with a cache equal to a lone one."""
    from popview.cache.reader import Reader
    from tests.cachecompare import assert_same_cache

    cache_dir, errors, paths = tmp_path / "both", [], []

    def convert(force: bool) -> None:
        try:
            with popview.open(trace, cache_dir=cache_dir, force=force) as exp:
                paths.append(exp.cache_path)
        except Exception as exc:  # noqa: BLE001 - asserted below
            errors.append(f"{type(exc).__name__}: {exc}")

    before = _lasting()
    runners = [threading.Thread(target=convert, args=(force,)) for force in (False, True)]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join(DEADLINE)
    assert not errors and len(paths) == 2 and paths[0] == paths[1], (errors, paths)
    for thread in threading.enumerate():       # the replaced cache's release: a moment
        if thread not in before and thread.name == "popview-release":
            thread.join(10)
    assert _outliving(before) == []
    with Reader(paths[0]) as reader:           # its checksums verified
        assert reader.definitions.n_locations == 8
    with popview.open(trace, cache_dir=tmp_path / "alone") as exp:
        assert_same_cache(paths[0], exp.cache_path)


class _SerialInOrder:
    """writer._InOrder without its thread: the consumer called in the caller's."""

    def __init__(self, consumer):
        self.consumer = consumer

    def __call__(self, data):
        if self.consumer is not None:
            self.consumer(data)

    def done(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _serial(monkeypatch) -> None:
    """The conversion's threads made serial: one parse thread, the spill written by the
    caller, no read-ahead (nor of the next table), the call paths built in the caller's thread."""
    from popview.readers.paraver import stream

    class CallersSpill(writer.SpillWrites):
        def write(self, fd, data, offset):
            writer._pwrite_all(fd, data, offset)

    monkeypatch.setattr(stream, "PARSE_THREADS", 1)
    monkeypatch.setattr(writer, "SpillWrites", CallersSpill)
    monkeypatch.setattr(writer, "_read_ahead", lambda read, items, rows, budget, first=None: (read(item) for item in items))
    monkeypatch.setattr(writer, "_first_group_ahead", lambda *a: None)      # nor the next table's first group
    monkeypatch.setattr(writer, "_InOrder", _SerialInOrder)


def _stressed(monkeypatch) -> None:
    """The threads given as much to interleave as a small trace allows: blocks of 64 KiB
    (many in flight, many spill writes) and sort groups of 3,000 rows (read ahead)."""
    from popview.readers.paraver import stream

    monkeypatch.setattr(stream, "BLOCK", 64 << 10)
    monkeypatch.setattr(writer, "SORT_BUDGET_ROWS", 3000)


@pytest.mark.parametrize("name", ["popview-heat/extrae/hyb_2x2/hyb_2x2.prv",                  # hybrid Extrae
                                  "profet-paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv",  # two applications
                                  "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz"])       # EPOCH, compressed
def test_threaded_conversion_equals_the_serial_one_on_real_traces(shared_traces, tmp_path, monkeypatch, name):
    from tests.cachecompare import assert_same_cache

    trace = shared_traces / name
    if not trace.exists():
        pytest.skip(f"{trace} is missing")
    caches = {}
    for mode, setup in (("serial", _serial), ("threaded", _stressed)):
        with monkeypatch.context() as patch:
            setup(patch)
            with popview.open(trace, cache_dir=tmp_path / mode) as exp:
                caches[mode] = (exp.cache_path, list(exp.definitions.warnings))
    assert caches["serial"][1] == caches["threaded"][1]
    assert_same_cache(caches["serial"][0], caches["threaded"][0])


@pytest.mark.parametrize("pool", ["popview-blocks", "popview-parse", "popview-spill", "popview-fingerprint",
                                  "popview-read", "popview-consume", "popview-side-jobs", "popview-writeback"])
def test_ctrl_c_while_a_thread_starts_leaves_no_thread_unwaited_for(trace, tmp_path, small_groups, monkeypatch, pool):
    """Ctrl-C (SIGINT to the converting main thread) in the ~100 us between the creation of
    a pool's thread and the end of its start: the thread runs, and its pool (or the code that
    started it) must still know of it and wait for it. A ThreadPoolExecutor registered its
    worker only after start() returned, and the block reader started its thread before the
    try that joins it: both left a thread nothing waited for (popview.threads)."""
    from popview.cache import sidecar

    monkeypatch.setattr(sidecar, "MIN_ROWS", 0)            # the side process and its job sender too
    started, joined = [], set()
    real_spawn, real_join = threading._start_new_thread, threading.Thread.join

    def spawn(function, args, *rest):
        ident = real_spawn(function, args, *rest)
        thread = getattr(function, "__self__", None)
        if isinstance(thread, threading.Thread) and thread.name.startswith(pool) and not started \
                and threading.current_thread() is threading.main_thread():
            started.append(thread)
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)     # the new thread runs already
        return ident

    def join(self, timeout=None):
        real_join(self, timeout)
        if not self.is_alive():
            joined.add(self)

    monkeypatch.setattr(threading, "_start_new_thread", spawn)
    monkeypatch.setattr(threading.Thread, "join", join)
    with pytest.raises(KeyboardInterrupt):
        popview.open(trace, cache_dir=tmp_path / "cache", timeline=True).close()
    assert started, f"no {pool} thread was started"
    assert started[0] in joined, f"{started[0].name} was not waited for"
    assert os.listdir(tmp_path / "cache") == []


@pytest.mark.parametrize("kind", ["Pool", "ThreadPoolExecutor"])
def test_a_pool_waits_for_a_worker_whose_start_ctrl_c_interrupted(monkeypatch, kind):
    """popview.threads.Pool, against the standard ThreadPoolExecutor it replaces: SIGINT
    right after a worker is created; the worker's task (0.3 s) must be over when the
    `with` block has unwound."""
    from concurrent.futures import ThreadPoolExecutor

    from popview.threads import Pool

    real_spawn = threading._start_new_thread
    fired = []

    def spawn(function, args, *rest):
        ident = real_spawn(function, args, *rest)
        if not fired:
            fired.append(function.__self__)
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        return ident

    monkeypatch.setattr(threading, "_start_new_thread", spawn)
    with pytest.raises(KeyboardInterrupt):
        with (Pool if kind == "Pool" else ThreadPoolExecutor)(1, thread_name_prefix="test-pool") as pool:
            pool.submit(time.sleep, 0.3)
    monkeypatch.undo()
    time.sleep(0.05)                       # the worker's own start done, its task not (0.3 s)
    alive = fired[0].is_alive()
    fired[0].join()
    if kind == "Pool":
        assert not alive, "the pool waited for its worker"
    else:
        assert alive, "the standard pool does not know its interrupted worker (what Pool fixes)"
