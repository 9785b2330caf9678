"""Where the cache of a source lives.

- `cache_dir` given (`--cache-dir DIR`, `popview.open(path, cache_dir=DIR)`):
  there.
- else `POPVIEW_CACHE_DIR` when set: there.
- else beside the source, when the user asked for it (`--cache-beside`,
  `POPVIEW_CACHE_BESIDE=1`, or `prefer_beside(True)`, which the window's
  setting calls) and the source's folder belongs to the user and is writable;
- else the user's cache directory (platformdirs: `$XDG_CACHE_HOME/popview`).

Caches outside the source's folder are named after a hash of the source's
absolute path. Names stay under the 255 bytes of a file name with room for the
lock's: a long name is shortened and the hash of the whole kept.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

import platformdirs

from popview.cache.errors import CacheUnwritable
from popview.cache.fingerprint import cache_key

SUFFIX = ".popview.h5"
BESIDE_ENV = "POPVIEW_CACHE_BESIDE"
MAX_NAME_BYTES = 200          # of a cache's name: its lock adds ".", ".lock"
_beside = False


def prefer_beside(on: bool) -> None:
    """The user's setting: caches beside the traces (where the folder allows)."""
    global _beside
    _beside = bool(on)


def beside_wanted() -> bool:
    env = os.environ.get(BESIDE_ENV, "").strip().lower()
    if env:
        return env not in ("0", "no", "false", "off")
    return _beside


def user_cache_dir() -> Path:
    return Path(os.environ.get("POPVIEW_CACHE_DIR") or platformdirs.user_cache_dir("popview"))


def cache_path(source: Path, cache_dir: Path | None = None, beside: bool | None = None) -> Path:
    source = Path(source).resolve()
    if cache_dir is None and not os.environ.get("POPVIEW_CACHE_DIR"):
        if (beside_wanted() if beside is None else beside) and owned_and_writable(source.parent):
            return source.parent / fit_name(source.name + SUFFIX)
    directory = Path(cache_dir) if cache_dir is not None else user_cache_dir()
    return directory / fit_name(f"{cache_key(source)}-{source.name}{SUFFIX}")


def fit_name(name: str, limit: int = MAX_NAME_BYTES) -> str:
    """`name`, or when longer than `limit` bytes its start, a hash of it and its suffix."""
    raw = os.fsencode(name)
    if len(raw) <= limit:
        return name
    digest = hashlib.sha1(raw).hexdigest()[:16]
    tail = f"~{digest}{SUFFIX}"
    head = raw[: limit - len(tail.encode())]
    return os.fsdecode(head) + tail        # a character cut in two stays bytes: fine for a file name


def lock_name(cache: Path) -> str:
    return f".{Path(cache).name}.lock"


OVERVIEW_SUFFIX = ".timeline.h5"
WINDOW_SUMS_SUFFIX = ".sums.h5"
COMPANION_SUFFIXES = (OVERVIEW_SUFFIX, WINDOW_SUMS_SUFFIX)   # popview.cache.companion's parts


def companion_path(cache, suffix: str) -> Path:
    """The companion file ending in `suffix` of the cache at `cache` (popview.cache.companion)."""
    cache = Path(cache)
    stem = cache.name[:-len(".h5")] if cache.name.endswith(".h5") else cache.name
    return cache.with_name(stem + suffix)


def overview_path(cache) -> Path:
    """The timeline overview's companion file of the cache at `cache` (popview.cache.overview)."""
    return companion_path(cache, OVERVIEW_SUFFIX)


def owned_and_writable(folder: Path) -> bool:
    """A folder of the user's own that the user may write (root passes os.access on
    anybody's folder: the owner is what tells)."""
    try:
        st = os.stat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and os.access(folder, os.W_OK | os.X_OK)


def prepare_directory(directory: Path) -> None:
    """Make the cache directory; CacheUnwritable when it cannot hold a cache."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CacheUnwritable(f"{directory}: cannot hold the cache: not a directory") from None
    except OSError as exc:
        raise unwritable(directory, exc) from None
    if not directory.is_dir():
        raise CacheUnwritable(f"{directory}: cannot hold the cache: not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CacheUnwritable(f"{directory}: cannot hold the cache: permission denied")


_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR,
                 errno.ENAMETOOLONG, errno.EFBIG, errno.EEXIST}


def is_write_failure(exc: BaseException) -> bool:
    """An OSError that says the cache's place cannot take it (full, read-only, ...)."""
    return isinstance(exc, OSError) and exc.errno in _WRITE_ERRNOS


def cannot_build(exc: BaseException) -> bool:
    """A companion (timeline overview, window sums) that cannot be built here: no room or no
    right to write it (is_write_failure), or its build process died (errors.CompanionFailed).
    The run is used without it, saying why."""
    from popview.cache.errors import CompanionFailed

    return is_write_failure(exc) or isinstance(exc, CompanionFailed)


def inside(path, directory: Path) -> bool:
    """Whether `path` lies in `directory` (the cache's: its scratch folder, lock, file)."""
    try:
        return Path(os.path.abspath(path)).is_relative_to(os.path.abspath(directory))
    except (TypeError, ValueError):
        return False


def unwritable(directory: Path, exc: OSError) -> CacheUnwritable:
    """The cache cannot be written in `directory` (`exc` says why); when `exc` names the
    timeline overview (its companion: the conversion's with it), that file is named."""
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    if exc.filename and str(exc.filename).endswith(OVERVIEW_SUFFIX):
        return CacheUnwritable(f"{exc.filename}: cannot write the timeline overview: {reason}")
    return CacheUnwritable(f"{directory}: cannot write the cache: {reason}")
