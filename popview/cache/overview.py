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
The mechanism (what a companion belongs to, its checks, its atomic build, its
lock) is companion.py's, shared with the window sums (window_sums.py):

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

from pathlib import Path

import h5py

from popview.cache import companion, integrity, location
from popview.cache.companion import DIGEST_ATTR, cache_digest_of  # noqa: F401 - this module's names
from popview.cache.progress import Progress

SUFFIX = location.OVERVIEW_SUFFIX


def build(source: h5py.File, defs, path: Path, progress: Progress) -> None:
    """The pyramid from the cache `source` into a new companion file at `path` (not yet
    completed; its tiles' scratch files in the folder of `path`). In one process: the
    conversion's split in two (the counters' channels in the side process) measured no
    faster from the cache at 1 GB, where the counters are three quarters of the work
    (docs/cache.md)."""
    from popview.cache import pyramid

    with integrity.writing(path, "w") as dst:
        pyramid.build(source, defs, progress, dst=dst)


# An EPOCH-shaped cache's overview weighs 1.44-1.48 times the cache (docs/cache.md).
# Version 1: the state channel's levels hold each bin's cover (pyramid.COVER); an overview of
# version 0 is built again at its first use.
PART = companion.Part("timeline overview", SUFFIX, "pyramid", lambda *a: build(*a), size_ratio=1.5,
                      module=__name__, version=1)


def path_of(cache) -> Path:
    """The companion of the cache at `cache`."""
    return companion.path_of(PART, cache)


def remove(cache) -> None:
    """Remove the companion of `cache` (the cache is being replaced)."""
    companion.remove(PART, cache)


def complete(path: Path, cache_digest: str) -> None:
    """Make the overview written at `path` (by a conversion) whole: see companion.complete."""
    companion.complete(path, cache_digest, PART.version)


def open_valid(cache, cache_digest: str | None, path: Path | None = None) -> h5py.File | None:
    """The companion of `cache`, open, when it belongs to the cache whose digest is
    `cache_digest` and is whole; None otherwise (companion.open_valid)."""
    return companion.open_valid(PART, cache, cache_digest, path)


def obtain(cache: Path, source: h5py.File, defs, cache_digest: str | None,
           progress: Progress | None = None) -> h5py.File:
    """The companion of `cache`, open: the valid one, or one built now (companion.obtain)."""
    return companion.obtain(PART, cache, source, defs, cache_digest, progress)
