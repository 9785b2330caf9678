"""Opening an experiment: fingerprint the source, reuse a valid cache or
convert into a new one, and hand out a read-only Experiment."""
from __future__ import annotations

import errno
import logging
import os
import threading
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from popview import jit
from popview.cache import Progress, location, summary
from popview.cache.fingerprint import fingerprint, matches, stats
from popview.cache import scratch
from popview.cache.scratch import CacheLock
from popview.cache.version import SCHEMA_VERSION
from popview.readers import InputError, format_named, reader_for, run_name
from popview.threads import Pool

if TYPE_CHECKING:
    from popview.cache.reader import Reader
    from popview.cache.writer import Writer

log = logging.getLogger("popview")


class Experiment:
    """One converted run: definitions plus lazy access to its records."""

    def __init__(self, source: Path, reader: Reader, converted: bool):
        self.source = Path(source)
        self.reader = reader
        self.cache_path = reader.path
        self.converted = converted          # False when opened from an existing cache
        self.definitions = reader.definitions
        self.timeline_failure: OSError | None = None    # why its timeline overview could not be built (location.cannot_build)

    @property
    def format(self) -> str:
        return self.definitions.source_format

    @property
    def is_trace(self) -> bool:
        return format_named(self.format).has_records

    @property
    def name(self) -> str:
        return run_name(self.source, self.format)

    def shape(self) -> tuple[int, int]:
        """(processes, max threads per process) of the main application."""
        return summary.shape(self.definitions)

    @property
    def label(self) -> str:
        p, t = self.shape()
        return f"{p}x{t}"

    def info(self) -> dict:
        """What the run contains (the cache's stored summary holds the same: stored_info)."""
        return {"source": str(self.source), "cache": str(self.cache_path), **summary.of_reader(self.reader)}

    def profile(self):
        """Metric x call path x location (popview.model.profile.Profile), read once."""
        if getattr(self, "_profile", None) is None:
            from popview.analysis.profiles import experiment_profile
            self._profile = experiment_profile(self)
        return self._profile

    def prepare_timeline(self, progress=None, cancel: threading.Event | None = None) -> None:
        """Make the timeline overview ready (popview.cache.overview): opened, or built from the
        cache now when it has none (seconds on a large trace: the window calls this on its
        opening lane, never in its GUI thread). A trace only; nothing for a profile.
        When it cannot be written anywhere (the cache's folder and the temporary folder full,
        over quota: location.is_write_failure), the failure is kept (timeline_failure) and
        raised again by the next calls without building again: the run has no timeline, the
        rest of it is there."""
        if not self.is_trace:
            return
        if self.timeline_failure is not None:
            raise self.timeline_failure
        try:
            self.reader.timeline(Progress(progress, cancel))
        except OSError as exc:
            if location.cannot_build(exc):
                self.timeline_failure = exc
            raise

    def open_timeline_found(self) -> bool:
        """Open the timeline overview when a valid one is there, never building it (a
        companion of another cache, damaged or absent is left for prepare_timeline).
        Whether it is open now."""
        if not self.is_trace or self.timeline_failure is not None:
            return False
        return self.reader.timeline_found()

    @property
    def timeline_prepared(self) -> bool:
        """Whether a timeline of this run draws without building its overview first."""
        return not self.is_trace or self.reader.timeline_open()

    def prepare_window_sums(self, progress=None, cancel: threading.Event | None = None, again: bool = True) -> None:
        """Make the window sums ready (popview.cache.window_sums): opened, or built from the
        cache now when it has none (seconds on a large trace: the window calls this on a
        lane of its own before a time-window or iteration focus, never in its GUI thread;
        the API and the CLI build them at their first use, in the caller's thread). A
        trace only; nothing for a profile. A build that failed before (a full disk: the
        reader remembers it, and the foci that read them fail with it at once) is tried
        again: this is the request to build them; with `again` False it is raised at once
        instead (a pane's refresh, which only the user's "try again" makes a request: a
        build that fails meanwhile, in another thread, is not tried again either)."""
        if self.is_trace:
            self.reader.window_sums(Progress(progress, cancel), again=again)

    @property
    def window_sums_failure(self) -> OSError | None:
        """Why the window sums could not be built (a full disk; None: not failed): time-window,
        iteration and auto foci fail with it, not building again, until prepare_window_sums."""
        return getattr(self.reader, "window_sums_failure", None)

    @property
    def window_sums_prepared(self) -> bool:
        """Whether a time-window focus of this run is computed without building the window sums first."""
        return not self.is_trace or self.reader.window_sums_open()

    def metrics(self, model: str = "pop-mpi", focus=None, **options):
        """The POP metric tree of `model` for `focus` (popview.analysis.metrics.metrics)."""
        from popview.analysis.metrics import metrics
        return metrics(self, model, focus, **options)

    def close(self) -> None:
        self.reader.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"<Experiment {self.name} {self.format} {self.label}>"


def convert(path, cache_dir=None, progress=None, cancel: threading.Event | None = None,
            force: bool = False, beside: bool | None = None, dask=None, timeline: bool = False,
            window_sums: bool = False, **dask_options) -> tuple[Path, bool]:
    """Make sure a valid cache of `path` exists. Returns (cache path, converted now).

    A cache is reused when it is complete, intact (its checksums verified) and of
    the source's content; a damaged one is converted again, the user told (the
    "popview" logger). Concurrent conversions of one source do the work once.
    `dask` converts on a Dask cluster: "local", "local:N", a scheduler's address, or a
    distributed Client or cluster (popview.cluster; docs/dask.md); the cache is the same.
    `timeline` also builds the timeline overview now (popview.cache.overview), with the
    conversion or for the cache found; otherwise it is built when a timeline first needs it.
    `window_sums` also builds the window sums now (popview.cache.window_sums), from the
    cache converted or found; otherwise they are built when a time window first needs them."""
    target, converted, reader, overview_failure = _convert(path, cache_dir, progress, cancel, force, beside, dask,
                                                           dask_options, timeline)
    if overview_failure is not None:        # the cache is there; its overview could not be written
        raise overview_failure
    if window_sums and reader is None:
        from popview.cache.reader import Reader

        reader = Reader(target, verify=False)
    if reader is not None:
        try:
            if timeline:
                reader.timeline(Progress(progress, cancel))
            if window_sums:
                reader.window_sums(Progress(progress, cancel))
        finally:
            reader.close()
    return target, converted


def _convert(path, cache_dir, progress, cancel, force, beside, dask=None, dask_options=None,
             timeline: bool = False) -> tuple[Path, bool, Reader | None, OSError | None]:
    """convert(), the cache's reader when a valid cache was found, and why the timeline
    overview asked for with the conversion could not be written (a full disk: the cache
    was, without it; errors.CompanionFailed naming the overview's file), else None."""
    path = Path(path)
    fmt, module = reader_for(path)
    anchor = module.anchor(path)
    try:
        files = module.source_files(anchor)
        size = sum(Path(f).stat().st_size for f in files)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    target = location.cache_path(anchor, Path(cache_dir) if cache_dir else None, beside)
    prog = Progress(progress, cancel)
    from popview.cache import signals

    if not force and (reader := _reusable(target, files)) is not None:
        _tidy(target)
        return target, False, reader, None
    location.prepare_directory(target.parent)
    lock = CacheLock(target, location.lock_name(target))
    try:
        lock.acquire(lambda: prog(0.0, "waiting for another conversion of this trace"))
        if (lock.contended or not force) and (reader := _reusable(target, files, quiet=True)) is not None:
            return target, False, reader, None
        with signals.sigterm_interrupts():
            before = stats(files)
            with _fingerprinting(files, before) as hashing:
                # numpy and the writer's modules (50 ms) imported while the sources are hashed (the
                # hash releases the GIL): it competed with the two parse threads for the cores
                from popview.cache import Writer

                with Writer(target, "", source_bytes=size, timeline=timeline) as writer, \
                        _engine(module, anchor, dask) as client:
                    # a small source's kernels run as Python: numba never loads (popview.jit); not
                    # with the timeline overview, which loads it (always compiled), nor on Dask, nor
                    # where the kernels compiled ahead of time hold the format's (no numba either)
                    small = not timeline and client is None and size <= getattr(module, "INTERPRETED_BYTES", 0) \
                        and not _compiled_ahead(module)
                    with jit.interpreted(small):
                        _read_source(module, anchor, writer, prog.sub(0.0, 0.7), client, dask_options or {})
                        writer.fingerprint = _fingerprinted(hashing, files, before)
                        writer.finish(prog.sub(0.7, 1.0))
    except OSError as exc:
        if exc.filename and not location.inside(exc.filename, target.parent):   # reading the source
            raise InputError(f"{exc.filename}: cannot read: {exc.strerror or exc}") from None
        if location.is_write_failure(exc):
            raise location.unwritable(target.parent, exc) from None
        raise
    except RuntimeError as exc:     # HDF5's flush when closing a file fails so on a full disk
        if "errno = 28" in str(exc):
            raise location.unwritable(target.parent, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))) from None
        raise
    finally:
        lock.release()
    return target, True, None, writer.timeline_failure


@contextmanager
def _fingerprinting(files: list[Path], before: dict):
    """The sources' fingerprint, hashed by a thread while they are read (the hash of a
    gigabyte, 0.3 s of reading it again from the page cache, came after the parse).
    A conversion that fails stops it: the hash is then of no use, and the thread must
    not outlive the conversion."""
    stop = threading.Event()
    pool = Pool(1, thread_name_prefix="popview-fingerprint")
    try:
        yield pool.submit(fingerprint, files, before, stop)
    finally:
        stop.set()
        pool.shutdown(wait=True)


def _fingerprinted(hashing: Future, files: list[Path], before: dict) -> str:
    """The fingerprint hashed while the sources were read; hashed again (a file changed
    since `before` gets no hash) when a file changed during the reading."""
    found = hashing.result()
    return found if stats(files) == before else fingerprint(files, before)


@contextmanager
def _engine(module, anchor: Path, dask):
    """A client of the Dask cluster `dask` names when the format has a distributed
    conversion, else None (the others convert here: their sources are small, a profile)."""
    if dask is None or not hasattr(module, "convert_distributed"):
        if dask is not None:
            log.info("popview: %s has no distributed conversion: converted on this machine", anchor.name)
        yield None
        return
    from popview import cluster

    with cluster.connect(dask) as client:
        yield client


def _read_source(module, anchor: Path, writer: Writer, progress: Progress, client, options: dict) -> None:
    """The reader's conversion into `writer`: on this machine, or on the Dask cluster of
    `client`, which then also sorts and writes the tables (Writer.finish_on)."""
    if client is None:
        module.convert(anchor, writer, progress)
        return
    options = dict(options)
    writer.finish_on(client, options.pop("group_rows", None))
    module.convert_distributed(anchor, writer, progress, client, **options)


def _tidy(target: Path) -> None:
    """What a conversion killed after putting its cache in place left beside it (its
    scratch folder and the cache's lock), and a build of a companion killed (its timeline
    overview's or window sums': its scratch folder and lock): removed by the next opening, not
    only by the next conversion."""
    scratch.remove_stale(target.parent)
    scratch.remove_stale_lock(target.parent / location.lock_name(target))
    for suffix in location.COMPANION_SUFFIXES:
        scratch.remove_stale_lock(target.parent / location.lock_name(location.companion_path(target, suffix)))


def _reusable(target: Path, files: list[Path], quiet: bool = False) -> Reader | None:
    """A valid cache's reader (a damaged one is told of once: `quiet` the second time)."""
    if not target.exists():        # nothing to read: h5py is imported while the conversion parses instead
        return None
    from popview.cache.reader import open_if_valid

    return open_if_valid(target, files, damaged=None if quiet else _tell_damaged)


def _compiled_ahead(module) -> bool:
    """Whether the module of kernels compiled ahead of time (popview.aot) holds the format's
    conversion kernel (`AHEAD_OF_TIME_KERNEL`): a small source then runs compiled there, numba
    not loaded either, faster than as Python (hyb_2x2: 0.31-0.35 against 0.65-0.68 s of CPU,
    stencil4d-64 0.43-0.48 against 0.52). Looking costs 0.015 s without a module, 0.1 s to
    load one (which a compiled conversion pays anyway)."""
    kernel = getattr(module, "AHEAD_OF_TIME_KERNEL", None)
    if kernel is None:
        return False
    from popview import aot

    return aot.enabled() and kernel in aot.functions()


def _tell_damaged(message: str) -> None:
    log.warning("popview: %s; converting it again", message)


WITH_CONVERSION = "with conversion"      # open(timeline=...): see open


def open(path, cache_dir=None, progress=None, cancel: threading.Event | None = None,  # noqa: A001
         force: bool = False, beside: bool | None = None, dask=None, timeline: bool | str = False,
         window_sums: bool = False, **dask_options) -> Experiment:
    """Open a trace or profile, converting it (once) into the cache (placement:
    popview.cache.location; `beside` None follows the user's setting; `dask`: see convert).
    `timeline`: the timeline overview is made ready too (built with the conversion, or
    from the cache found when it has none yet), so that drawing a timeline never waits
    for it; otherwise the first timeline drawn builds it (Experiment.prepare_timeline).
    WITH_CONVERSION (the window's openings): built with the conversion when this call
    converts (a fifth of its time, against 6-10 s from the cache at 1 GB), and opened when
    the cache found has a valid one; a cache found without one opens at once, without it
    (`popview convert`'s: the window's Timeline pane builds it on a lane of its own).
    `window_sums`: the window sums are made ready too (built from the cache when it has
    none yet); otherwise the first time-window focus builds them (Experiment.prepare_window_sums).
    An overview that cannot be written (a full disk) does not stop the opening: it is
    logged and kept in the run's timeline_failure."""
    target, converted, reader, overview_failure = _convert(path, cache_dir, progress, cancel, force, beside, dask,
                                                           dask_options, bool(timeline))
    from popview.cache.reader import Reader    # imported by the conversion's first records, or by _reusable

    exp = Experiment(Path(path), reader or Reader(target, verify=False), converted)
    try:
        if overview_failure is not None:        # written with the conversion, it failed (a full disk)
            exp.timeline_failure = overview_failure
            log.warning("popview: %s: its timeline overview cannot be built (%s): opened without a timeline",
                        path, overview_failure)
        elif timeline == WITH_CONVERSION and not converted:
            exp.open_timeline_found()
        elif timeline:
            try:
                exp.prepare_timeline(progress, cancel)
            except OSError as exc:
                if not location.cannot_build(exc):
                    raise
                from popview.cache.integrity import first_line      # h5py: not for a warm `popview info`

                log.warning("popview: %s: its timeline overview cannot be built (%s): opened without a timeline",
                            path, first_line(exc))
        if window_sums:
            exp.prepare_window_sums(progress, cancel)
    except BaseException:
        exp.close()
        raise
    return exp


def stored_info(path, cache_dir=None, beside: bool | None = None) -> dict | None:
    """Experiment.info() of `path` read from its cache's stored summary (popview.cache.summary):
    a few kilobytes, no HDF5, numpy or kernels. None when the answer needs the cache opened:
    no cache yet, one of another schema, of another content of the source, or without a
    summary to trust (then `open(path).info()` answers, converting when needed)."""
    path = Path(path)
    _, module = reader_for(path)
    anchor = module.anchor(path)
    try:
        files = module.source_files(anchor)
    except OSError:
        return None
    target = location.cache_path(anchor, Path(cache_dir) if cache_dir else None, beside)
    stored = summary.read(target)
    if stored is None or stored.get("schema_version") != SCHEMA_VERSION \
            or not matches(stored.get("fingerprint", ""), files):
        return None
    _tidy(target)
    return {"source": str(path), "cache": str(target), **stored["info"]}
