"""The timeline overview: the pyramid and tiles the timeline draws from
(pyramid.py), kept in a companion file beside its cache and built when first
needed, not at every conversion.

Only the timeline reads the pyramid, yet it was about a quarter of a
conversion's CPU and 60 % of an EPOCH cache's bytes: `popview metrics`,
`info`, `report`, `diff` and `paramedir` paid for it on every trace and every
opening's checksum. Now:

- `<cache stem>.timeline.h5` beside `<cache stem>.h5` (path_of) holds the
  group "pyramid". A conversion asked for it (`popview convert --timeline`,
  the window's openings: `popview.open(..., timeline=True)`) builds it from
  the raw sorted tables as the cache's other derived data (in two processes
  or on Dask alike); otherwise the first use builds it from the finished
  cache itself (Reader.timeline: the window's opening lane, or a script's
  TimelineData), in this process (build).
- It belongs to one cache: its attribute `cache_digest` is the digest sealed
  in its cache's user block (integrity.py), and it is complete, of this schema,
  signed and sealed like a cache. It is used only when all of that holds and
  its whole-file digest, attributes and chunk checksums verify (open_valid):
  the companion of another (reconverted) cache, an older one, a damaged or
  truncated one is built again, never read.
- It is written in a scratch folder (scratch.py: one a process killed left is
  removed by the next conversion or build in that folder) and renamed into
  place once sealed (atomic.put_in_place): never a half-written file at its
  name. Builds take the lock `.<name>.lock`, so that two processes asking at
  once build it once (the second waits, then opens it); without the lock the
  renames alone would still leave one whole file.
- A conversion into the cache replaces it, or removes it when it builds none
  (Writer._complete): a reconverted cache never keeps the old overview.
- Where the cache's folder cannot be written (a shared, read-only cache
  directory), it is built into a private temporary file, unlinked once open:
  this process draws from it, and the next one builds it again.

Caches converted before the companion existed keep their pyramid inside; it
is read there (Reader.timeline).
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

import h5py

from popview import atomic
from popview.cache import integrity, location
from popview.cache.errors import CacheDamaged
from popview.cache.progress import Progress
from popview.cache.version import SCHEMA_VERSION

log = logging.getLogger("popview")

SUFFIX = location.OVERVIEW_SUFFIX
DIGEST_ATTR = "cache_digest"


def path_of(cache) -> Path:
    """The companion of the cache at `cache`."""
    return location.overview_path(cache)


def remove(cache) -> None:
    """Remove the companion of `cache` (the cache is being replaced)."""
    try:
        path_of(cache).unlink(missing_ok=True)
    except OSError:
        pass


def complete(path: Path, cache_digest: str) -> None:
    """Make the companion written at `path` whole: what it belongs to, signed, sealed."""
    from popview._version import __version__

    with integrity.writing(path, "r+") as h5:
        h5.attrs["schema_version"] = SCHEMA_VERSION
        h5.attrs["popview_version"] = __version__
        h5.attrs[DIGEST_ATTR] = cache_digest
        h5.attrs["complete"] = True
        integrity.sign(h5)
    integrity.seal(Path(path))


def open_valid(cache, cache_digest: str | None, path: Path | None = None) -> h5py.File | None:
    """The companion of `cache` (at `path`, default path_of(cache)), open, when it belongs
    to the cache whose digest is `cache_digest` and is whole; None otherwise (a damaged one
    is logged: it is built again)."""
    path = Path(path) if path is not None else path_of(cache)
    if cache_digest is None or not path.exists():
        return None
    try:
        h5 = h5py.File(path, "r")
    except OSError as exc:
        log.warning("popview: %s: timeline overview unreadable (%s); building it again", path,
                    integrity.first_line(exc))
        return None
    try:
        attrs = h5.attrs
        if not (attrs.get("complete", False) and int(attrs.get("schema_version", -1)) == SCHEMA_VERSION
                and _text(attrs.get(DIGEST_ATTR)) == cache_digest):
            h5.close()                     # another cache's, or an older release's: not an error
            return None
        integrity.verify(h5)
        if "pyramid" not in h5:
            raise CacheDamaged(f"{path}: cache damaged (no pyramid group)")
    except CacheDamaged as exc:
        h5.close()
        log.warning("popview: %s: timeline overview damaged (%s); building it again", path, exc)
        return None
    except Exception as exc:               # noqa: BLE001 - attributes of the wrong type: not ours
        h5.close()
        log.warning("popview: %s: timeline overview not usable (%s); building it again", path,
                    integrity.first_line(exc))
        return None
    return h5


def _text(value) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


def obtain(cache: Path, source: h5py.File, defs, cache_digest: str, progress: Progress | None = None) -> h5py.File:
    """The companion of `cache`, open: the valid one, or one built now from `source` (the
    cache open, whose definitions are `defs` and digest `cache_digest`)."""
    from popview.cache.scratch import CacheLock

    progress = progress or Progress()
    if cache_digest is None:                   # an unsealed cache: nothing to tie a companion to
        return _private(source, defs, progress)
    target = path_of(cache)
    found = open_valid(cache, cache_digest, target)
    if found is not None:
        return found
    lock = CacheLock(target, location.lock_name(target))
    try:
        lock.acquire(lambda: progress(0.0, "waiting for another build of the timeline overview"))
    except OSError as exc:
        if not location.is_write_failure(exc):
            raise
        return _private(source, defs, progress)
    try:
        found = open_valid(cache, cache_digest, target)       # built by the process we waited for
        if found is not None:
            return found
        replaced = integrity.stored_digest(cache) != cache_digest
        if not replaced:
            log.info("popview: building the timeline overview of %s (its first use)", cache)
            try:
                build_into(target.parent, target, source, defs, cache_digest, progress)
            except OSError as exc:
                if not location.is_write_failure(exc):
                    raise
                return _private(source, defs, progress)
    finally:
        lock.release()
    if replaced:
        # the cache open here was reconverted or deleted since it was opened: the name of its
        # companion belongs to the cache now at its path (or to none), not to this one
        return _private(source, defs, progress, f"{cache} changed since it was opened")
    found = open_valid(cache, cache_digest, target)
    if found is None:
        raise CacheDamaged(f"{target}: the timeline overview just built does not verify")
    return found


def build_into(directory: Path, target: Path, source: h5py.File, defs, cache_digest: str,
               progress: Progress) -> None:
    """Build the companion in a scratch folder of `directory` and rename it to `target`:
    whole or not at all (a cancel or a failure leaves nothing)."""
    from popview.cache.scratch import Scratch

    scratch = Scratch(directory)
    try:
        tmp = scratch.path / "timeline.h5"
        build(source, defs, tmp, progress)
        progress.check()                       # a cancel until the rename leaves nothing
        complete(tmp, cache_digest)
        atomic.put_in_place(tmp, target)
    finally:
        scratch.remove()


def _private(source: h5py.File, defs, progress: Progress,
             why: str = "the cache's folder cannot be written") -> h5py.File:
    """Built into a temporary file of this process's own, opened and unlinked: for caches in
    a folder this user cannot write, or replaced since they were opened (`why`)."""
    folder = Path(tempfile.mkdtemp(prefix="popview-timeline-"))
    try:
        path = folder / "timeline.h5"
        build(source, defs, path, progress)
        log.info("popview: %s: its timeline overview is kept for this process only", why)
        return h5py.File(path, "r")       # unlinked below; the open file lives on
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def build(source: h5py.File, defs, path: Path, progress: Progress) -> None:
    """The pyramid from the cache `source` into a new companion file at `path` (not yet
    completed; its tiles' scratch files in the folder of `path`). In one process: the
    conversion's split in two (the counters' channels in the side process) measured no
    faster from the cache at 1 GB, where the counters are three quarters of the work
    (docs/cache.md)."""
    from popview.cache import pyramid

    with integrity.writing(path, "w") as dst:
        pyramid.build(source, defs, progress, dst=dst)


def cache_digest_of(h5: h5py.File) -> str | None:
    """The digest sealed in the user block of the open cache `h5` (read through its own
    file descriptor: the file open, even when another conversion renamed a new one to its
    path since)."""
    try:
        fd = h5.id.get_vfd_handle()
        head = os.pread(fd, 64, 0)
    except Exception:                        # noqa: BLE001 - another driver: read the path
        return integrity.stored_digest(h5.filename)
    return integrity.digest_in(head)
