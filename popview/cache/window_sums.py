"""The window sums: the rows of the cumulative sums (`seg`: each state row's category,
parallel region and counter deltas; the checkpoints `ck_*`), which only time-window and
iteration foci (analysis/window_index.py) and the replay's weights read, kept in a
companion file beside the cache (companion.py) and built when first needed.

A conversion builds the cumulative group's whole-run part into the cache (totals,
ctr_totals, profile, master_calls: whole-run and call-path metrics, the trees); the
first use of a window builds `<cache stem>.sums.h5`, whose group "cumulative" holds
`seg` and the checkpoints, from the finished cache by the builder's same pass over the
records (cumulative.build(rows=True, profile=False)): the same rows, byte for byte, as
a cache that held them. Reader.window_sums opens or builds it; `popview convert --all`
(popview.open(..., window_sums=True)) builds it right after the conversion.

Caches converted before the companion existed keep their rows in the cache's own
cumulative group; they are read there (Reader.window_sums).
"""
from __future__ import annotations

from pathlib import Path

import h5py

from popview.cache import companion, integrity, location
from popview.cache.progress import Progress

SUFFIX = location.WINDOW_SUMS_SUFFIX
GROUP = "cumulative"
ROWS = "seg"                  # the dataset that tells a cache holding its rows itself


def build(source: h5py.File, defs, path: Path, progress: Progress) -> None:
    """The rows of the cumulative sums of the cache `source` into a new companion file at
    `path` (not yet completed)."""
    from popview.cache import cumulative

    with integrity.writing(path, "w") as dst:
        cumulative.build(source, defs, progress, dst=dst, rows=True, profile=False)
        if GROUP not in dst:                   # a run without states: nothing to sum, an empty group
            dst.create_group(GROUP)


# The window sums weigh 0.4-0.6 times an EPOCH-shaped or small real trace's cache (1 GB trace: 68 MB beside
# 114 MB), 1.5 times the 10^7-event OTF2 archive's (15.6 MB beside 10.2 MB): room for twice the cache is asked.
PART = companion.Part("window sums", SUFFIX, GROUP, lambda *a: build(*a), size_ratio=2.0, module=__name__)


def path_of(cache) -> Path:
    """The window sums' companion of the cache at `cache`."""
    return companion.path_of(PART, cache)


def remove(cache) -> None:
    companion.remove(PART, cache)


def obtain(cache: Path, source: h5py.File, defs, cache_digest: str | None,
           progress: Progress | None = None) -> h5py.File:
    """The companion of `cache`, open: the valid one, or one built now (companion.obtain)."""
    return companion.obtain(PART, cache, source, defs, cache_digest, progress)
