"""Where the cache of a source lives: beside it when writable, else in the
user's cache directory (XDG), or wherever --cache-dir says."""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from popview.cache.fingerprint import cache_key

SUFFIX = ".popview.h5"


def user_cache_dir() -> Path:
    return Path(os.environ.get("POPVIEW_CACHE_DIR") or platformdirs.user_cache_dir("popview"))


def cache_path(source: Path, cache_dir: Path | None = None) -> Path:
    source = Path(source).resolve()
    name = source.name + SUFFIX
    if cache_dir is not None:
        return Path(cache_dir) / f"{cache_key(source)}-{name}"
    parent = source.parent
    if os.access(parent, os.W_OK):
        return parent / name
    return user_cache_dir() / f"{cache_key(source)}-{name}"
