"""Derived parts of a cache kept in companion files beside it and built when first
needed, not at every conversion: the timeline overview (overview.py) and the
window sums (window_sums.py). One mechanism for both:

- `<cache stem><suffix>` beside `<cache stem>.h5` (path_of) holds the part's one
  group. A conversion asked for it builds it; otherwise the first use builds it
  from the finished cache itself (obtain: Reader.timeline, Reader.window_sums).
- It belongs to one cache: its attribute `cache_digest` is the digest sealed in its
  cache's user block (integrity.py), and it is complete, of this schema, signed and
  sealed like a cache. It is used only when all of that holds and its whole-file
  digest, attributes and chunk checksums verify (open_valid): the companion of
  another (reconverted) cache, an older one, a damaged or truncated one is built
  again, never read.
- It is written in a scratch folder (scratch.py: one a process killed left is
  removed by the next conversion or build in that folder) and renamed into place
  once sealed (atomic.put_in_place): never a half-written file at its name. Builds
  take the lock `.<name>.lock`, so that two processes asking at once build it once
  (the second waits, then opens it).
- A conversion into the cache replaces or removes every companion
  (Writer._complete): a reconverted cache never keeps an old one.
- Where the cache's folder cannot be written (a shared, read-only cache directory),
  it is built into a private temporary file, unlinked once open: this process reads
  it, and the next one builds it again.
- No write to it can fail inside HDF5 in this process (build_file): a write that fails
  inside HDF5 (a disk filled up during the build) leaves objects whose release crashes
  the process that made them (SIGSEGV in H5D_close). A small one is built into memory
  and written out with plain writes; a large one in a child process (the conversion's
  side process, sidecar.py, given the open cache's descriptor), which this process
  waits for, relaying its progress and stopping it on a cancel, and which alone may
  crash. A failure is raised here as errors.CompanionFailed: the file, and "No space
  left on device" or how the child ended.
"""
from __future__ import annotations

import errno
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import h5py

from popview import atomic
from popview.cache import integrity, location
from popview.cache.errors import CacheDamaged, CompanionFailed, DerivedProcessEnded
from popview.cache.progress import Progress
from popview.cache.version import SCHEMA_VERSION

log = logging.getLogger("popview")

DIGEST_ATTR = "cache_digest"
VERSION_ATTR = "part_version"     # Part.version (none: 0)


@dataclass(frozen=True)
class Part:
    """A derived part kept beside its cache: `title` names it in messages, `suffix` ends
    its file's name, `group` is what it holds, `build(source, defs, path, progress)`
    writes that group from the open cache `source` into a new file at `path`."""
    title: str
    suffix: str
    group: str
    build: Callable[[h5py.File, object, Path, Progress], None]
    size_ratio: float = 0.0       # its file's bytes per byte of its cache, about (0: not checked)
    module: str = ""              # the module whose PART it is: how the child process finds it
    version: int = 0              # of its content: one of another version is built again (the cache kept)


# Where a companion is built (build_file): one expected to weigh up to IN_MEMORY_BYTES in this
# process, into memory, then written out; a larger one in a child process (IN_CHILD; off, or
# where the side process cannot run: here, into its file as it is built, never held whole).
IN_MEMORY_BYTES = 64 << 20
IN_CHILD = True


# Beyond the part's own bytes: its scratch files and HDF5's metadata while it is built.
_SPACE_MARGIN = 64 << 20


def check_space(part: Part, source: h5py.File, directory: Path) -> None:
    """Refuse a build the folder has no room for, with ENOSPC (a write failure, handled as
    a full disk is), before it starts: HDF5 crashes the process (SIGSEGV in H5D_close)
    releasing a file whose writes failed when the disk filled during the build. A disk
    filled by others while it runs is not prevented (docs/cache.md)."""
    if not part.size_ratio:
        return
    needed = int(part.size_ratio * os.fstat(source.id.get_vfd_handle()).st_size) + _SPACE_MARGIN
    try:
        free = shutil.disk_usage(directory).free
    except OSError:
        return
    if free < needed:
        raise OSError(errno.ENOSPC, f"no room: about {needed >> 20} MiB needed, {free >> 20} MiB free",
                      str(directory))


def path_of(part: Part, cache) -> Path:
    """The companion `part` of the cache at `cache`."""
    return location.companion_path(cache, part.suffix)


def remove(part: Part, cache) -> None:
    """Remove the companion `part` of `cache` (the cache is being replaced)."""
    try:
        path_of(part, cache).unlink(missing_ok=True)
    except OSError:
        pass


def keep_if_still_valid(part: Part, cache, new_digest: str) -> bool:
    """The cache at `cache` is being replaced by one whose digest is `new_digest`: its
    companion `part` stays when it belongs to that digest (a trace converted again unchanged
    gives the same cache, byte for byte: `popview convert --force`), and is removed
    otherwise. Only its attribute is read here; its use verifies it whole (open_valid).
    Whether it was kept."""
    path = path_of(part, cache)
    try:
        with h5py.File(path, "r") as h5:
            if _text(h5.attrs.get(DIGEST_ATTR)) == new_digest and h5.attrs.get("complete", False) \
                    and int(h5.attrs.get(VERSION_ATTR, 0)) == part.version:
                return True
    except (OSError, ValueError, TypeError):
        pass                          # none there, or not a whole file: removed
    remove(part, cache)
    return False


def complete(path: Path, cache_digest: str, version: int = 0) -> None:
    """Make the companion written at `path` whole: what it belongs to, its part's content
    `version` (Part.version), signed, sealed."""
    _sign(path, cache_digest, version)
    integrity.seal(Path(path))


def _sign(path: Path, cache_digest: str, version: int = 0) -> None:
    from popview._version import __version__

    with integrity.writing(path, "r+") as h5:
        h5.attrs["schema_version"] = SCHEMA_VERSION
        h5.attrs[VERSION_ATTR] = version
        h5.attrs["popview_version"] = __version__
        h5.attrs[DIGEST_ATTR] = cache_digest
        h5.attrs["complete"] = True
        integrity.sign(h5)


def open_valid(part: Part, cache, cache_digest: str | None, path: Path | None = None) -> h5py.File | None:
    """The companion `part` of `cache` (at `path`, default path_of), open, when it belongs to
    the cache whose digest is `cache_digest` and is whole; None otherwise (a damaged one is
    logged: it is built again)."""
    path = Path(path) if path is not None else path_of(part, cache)
    if cache_digest is None or not path.exists():
        return None
    try:
        h5 = h5py.File(path, "r")
    except OSError as exc:
        log.warning("popview: %s: %s unreadable (%s); building it again", path, part.title,
                    integrity.first_line(exc))
        return None
    try:
        attrs = h5.attrs
        if not (attrs.get("complete", False) and int(attrs.get("schema_version", -1)) == SCHEMA_VERSION
                and int(attrs.get(VERSION_ATTR, 0)) == part.version and _text(attrs.get(DIGEST_ATTR)) == cache_digest):
            h5.close()                     # another cache's, or an older release's: not an error
            return None
        integrity.verify(h5)
        if part.group not in h5:
            raise CacheDamaged(f"{path}: cache damaged (no {part.group} group)")
    except CacheDamaged as exc:
        h5.close()
        log.warning("popview: %s: %s damaged (%s); building it again", path, part.title, exc)
        return None
    except Exception as exc:               # noqa: BLE001 - attributes of the wrong type: not ours
        h5.close()
        log.warning("popview: %s: %s not usable (%s); building it again", path, part.title,
                    integrity.first_line(exc))
        return None
    return h5


def _text(value) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


def obtain(part: Part, cache: Path, source: h5py.File, defs, cache_digest: str | None,
           progress: Progress | None = None) -> h5py.File:
    """The companion `part` of `cache`, open: the valid one, or one built now from `source`
    (the cache open, whose definitions are `defs` and digest `cache_digest`)."""
    from popview.cache.scratch import CacheLock

    progress = progress or Progress()
    if cache_digest is None:                   # an unsealed cache: nothing to tie a companion to
        return _private(part, source, defs, progress)
    target = path_of(part, cache)
    found = open_valid(part, cache, cache_digest, target)
    if found is not None:
        return found
    lock = CacheLock(target, location.lock_name(target))
    try:
        lock.acquire(lambda: progress(0.0, f"waiting for another build of the {part.title}"))
    except OSError as exc:
        if not location.is_write_failure(exc):
            raise
        return _private_after(exc, part, target, source, defs, progress)
    try:
        found = open_valid(part, cache, cache_digest, target)       # built by the process we waited for
        if found is not None:
            return found
        replaced = integrity.stored_digest(cache) != cache_digest
        if not replaced:
            log.info("popview: building the %s of %s (its first use)", part.title, cache)
            try:
                build_into(part, target.parent, target, source, defs, cache_digest, progress)
            except OSError as exc:
                if not location.is_write_failure(exc):
                    raise
                return _private_after(exc, part, target, source, defs, progress)
    finally:
        lock.release()
    if replaced:
        # the cache open here was reconverted or deleted since it was opened: the name of its
        # companion belongs to the cache now at its path (or to none), not to this one
        return _private(part, source, defs, progress, f"{cache} changed since it was opened")
    found = open_valid(part, cache, cache_digest, target)
    if found is None:
        raise CacheDamaged(f"{target}: the {part.title} just built does not verify")
    return found


def build_into(part: Part, directory: Path, target: Path, source: h5py.File, defs, cache_digest: str,
               progress: Progress) -> None:
    """Build the companion in a scratch folder of `directory` and rename it to `target`:
    whole or not at all (a cancel or a failure leaves nothing)."""
    from popview.cache.scratch import Scratch

    check_space(part, source, directory)
    scratch = Scratch(directory)
    try:
        tmp = scratch.path / f"part{part.suffix}"
        build_file(part, source, defs, tmp, progress, cache_digest, target)
        progress.check()                       # a cancel until the rename leaves nothing
        atomic.put_in_place(tmp, target)
    finally:
        scratch.remove()


def build_file(part: Part, source: h5py.File, defs, path: Path, progress: Progress, cache_digest: str | None,
               named: Path) -> None:
    """The part built into a new file at `path` from the open cache `source` and, given
    `cache_digest`, completed (complete), such that a write failing as it is built (a disk
    that fills up) never happens inside HDF5 in this process: HDF5 crashes the process
    (SIGSEGV in H5D_close) releasing a file whose writes failed. A small one (up to
    IN_MEMORY_BYTES expected) is built here into memory and then written with plain writes
    (integrity.in_memory): a few MB held a moment, no process to start (0.3-0.6 s of a
    small trace's first use); a larger one in a child process (IN_CHILD, where the side
    process runs), which alone may crash; where it cannot run (not POSIX), into its file as
    it is built (never held whole in memory: 1.5-3 times its cache's size), as before. A failure to write it, or the child's death, is
    raised as errors.CompanionFailed naming `named` (the file the user knows of) and what
    failed."""
    from popview.cache import sidecar

    try:
        fd = source.id.get_vfd_handle()
        expected = part.size_ratio * os.fstat(fd).st_size
    except Exception:                        # noqa: BLE001 - another driver: no descriptor to hand over
        fd, expected = None, 0
    try:
        if expected > IN_MEMORY_BYTES:
            if IN_CHILD and part.module and fd is not None and sidecar.available():
                _build_in_child(part, fd, path, progress, cache_digest, named)
                return
            # no child process here (not POSIX): written into its file as it is built, as
            # before, not held whole in memory (1.5-3 times its cache's size); a disk that
            # fills up during the build may then end the process (docs/cache.md)
            part.build(source, defs, path, progress)
            if cache_digest is not None:
                progress.check()
                complete(path, cache_digest, part.version)
            return
        with integrity.in_memory(path) as write_out:
            part.build(source, defs, path, progress)
            if cache_digest is not None:
                progress.check()
                _sign(path, cache_digest, part.version)
            write_out()
        if cache_digest is not None:
            integrity.seal(path)
    except OSError as exc:
        if not location.is_write_failure(exc) or isinstance(exc, CompanionFailed):
            raise
        raise CompanionFailed(exc.errno, f"cannot write the {part.title}: {os.strerror(exc.errno)}",
                              str(named)) from None


def _build_in_child(part: Part, fd: int, path: Path, progress: Progress, cache_digest: str | None,
                    named: Path) -> None:
    """build_file's work in a child process given the cache's descriptor `fd` (run_job); its
    failure raised here: a write failure with its errno (an OSError), another exception as
    errors.DerivedDataFailed with its type and message, its death as CompanionFailed."""
    from popview.cache import sidecar

    child = sidecar.SideBuilder(preload=("h5py", "hdf5plugin", part.module), pass_fds=(fd,))
    try:
        child.submit_job({"companion": part.module, "source": fd, "dst": str(path), "digest": cache_digest})
        child.no_more_jobs()
        child.wait(progress)
    except DerivedProcessEnded as exc:       # killed, crashed: the run is used without it
        raise CompanionFailed(None, f"building the {part.title} failed: "
                                    f"{str(exc).replace('the derived-data process', 'its process')}",
                              str(named)) from None
    finally:
        child.close()


def run_job(job: dict, progress: Progress) -> None:
    """In the child process (sidecar._run): build_file's work, the cache read through the
    descriptor its parent handed over (the very file the parent has open, even when another
    conversion renamed a new cache to its path since)."""
    import importlib

    from popview.cache.reader import Reader

    part = importlib.import_module(job["companion"]).PART
    with Reader(Path(f"/dev/fd/{job['source']}"), verify=False) as cache:
        digest = job["digest"]
        if digest is not None and cache_digest_of(cache.h5) != digest:
            raise CacheDamaged(f"{job['dst']}: the cache handed over is not the one asked for")
        part.build(cache.h5, cache.definitions, Path(job["dst"]), progress)
        if digest is not None:
            complete(Path(job["dst"]), digest, part.version)


def _private_after(failure: OSError, part: Part, target: Path, source: h5py.File, defs,
                   progress: Progress) -> h5py.File:
    """_private, the build at `target` having failed with `failure` (a full disk, a read-only
    folder): when the private one fails too, both are said, `target` named."""
    try:
        return _private(part, source, defs, progress)
    except OSError as exc:
        if not location.is_write_failure(exc):
            raise
        raise CompanionFailed(failure.errno, f"cannot write the {part.title}: {_why(failure)} (nor a private "
                                             f"copy in {tempfile.gettempdir()}: {_why(exc)})", str(target)) from None


def _why(exc: OSError) -> str:
    """What failed, in a few words: `No space left on device`, `no room: ...`."""
    if isinstance(exc, CompanionFailed) or not exc.strerror:
        return os.strerror(exc.errno)
    return exc.strerror


def _private(part: Part, source: h5py.File, defs, progress: Progress,
             why: str = "the cache's folder cannot be written") -> h5py.File:
    """Built into a temporary file of this process's own, opened and unlinked: for caches in
    a folder this user cannot write, or replaced since they were opened (`why`)."""
    check_space(part, source, Path(tempfile.gettempdir()))
    folder = Path(tempfile.mkdtemp(prefix="popview-part-"))
    try:
        path = folder / f"part{part.suffix}"
        build_file(part, source, defs, path, progress, None, Path(tempfile.gettempdir()))
        log.info("popview: %s: its %s is kept for this process only", why, part.title)
        return h5py.File(path, "r")       # unlinked below; the open file lives on
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
