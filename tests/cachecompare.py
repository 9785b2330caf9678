"""Two caches compared dataset by dataset: the same datasets (names, dtypes, shapes,
values) and the same attributes, of the file and of every group and dataset. What a
change to the conversion's mechanics (threads, order of work, the Dask finish) must
keep; the integrity attributes that cover the file's bytes are left out by default.

    python -m tests.cachecompare A.h5 B.h5        # exit status 1 and the differences

Large datasets are compared in slices (a 1 GB trace's cache holds more than the
memory of a test machine two at a time)."""
from __future__ import annotations

import sys
from pathlib import Path

import h5py
import hdf5plugin  # noqa: F401 - the Zstd filter the caches use
import numpy as np

SLICE_ROWS = 4_000_000


def _objects(f: h5py.File) -> dict[str, h5py.HLObject]:
    found = {"/": f}
    f.visititems(lambda name, obj: found.__setitem__(name, obj))
    return found


# A timeline overview's attributes that name its own cache (popview.cache.overview): the
# overviews of two caches of the same content differ there only.
OVERVIEW_OWN = ("cache_digest", "attrs_digest")


def _same_attrs(a, b, ignore: tuple[str, ...] = ()) -> bool:
    if sorted(k for k in a.attrs if k not in ignore) != sorted(k for k in b.attrs if k not in ignore):
        return False
    for key in (k for k in a.attrs if k not in ignore):
        x, y = a.attrs[key], b.attrs[key]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (np.shape(x) == np.shape(y) and np.array_equal(x, y)):
                return False
        elif str(x) != str(y):
            return False
    return True


def _same_values(a: h5py.Dataset, b: h5py.Dataset) -> bool:
    if a.shape == () or not a.shape[0]:
        return np.array_equal(a[()], b[()], equal_nan=a.dtype.kind == "f")
    for lo in range(0, a.shape[0], SLICE_ROWS):
        x, y = a[lo:lo + SLICE_ROWS], b[lo:lo + SLICE_ROWS]
        if not np.array_equal(x, y, equal_nan=a.dtype.kind == "f"):
            return False
    return True


def differences(one: Path, other: Path, attrs: str = "all", ignore: tuple[str, ...] = ()) -> list[str]:
    """What differs between the caches at `one` and `other` (empty: the same). `attrs`:
    "all" compares every object's attributes, "root" the file's only; the file's attributes
    named in `ignore` are not compared."""
    out = []
    with h5py.File(one, "r") as fa, h5py.File(other, "r") as fb:
        a, b = _objects(fa), _objects(fb)
        if sorted(a) != sorted(b):
            out.append(f"objects only in the first: {sorted(set(a) - set(b))}; "
                       f"only in the second: {sorted(set(b) - set(a))}")
        for name in sorted(set(a) & set(b)):
            x, y = a[name], b[name]
            if (attrs == "all" or name == "/") and not _same_attrs(x, y, ignore if name == "/" else ()):
                out.append(f"{name}: attributes differ")
            if isinstance(x, h5py.Dataset) != isinstance(y, h5py.Dataset):
                out.append(f"{name}: a dataset in one cache only")
            elif isinstance(x, h5py.Dataset):
                if x.dtype != y.dtype or x.shape != y.shape:
                    out.append(f"{name}: {x.dtype}{x.shape} against {y.dtype}{y.shape}")
                elif not _same_values(x, y):
                    out.append(f"{name}: values differ")
    return out


def _companion_differences(one: Path, other: Path, path_of, what: str) -> list[str]:
    """What differs between the companion files (at path_of(cache)) of the caches at `one`
    and `other`: none for both, or the same but for the cache they name."""
    a, b = path_of(one), path_of(other)
    if a.exists() != b.exists():
        return [f"{what} beside {one if a.exists() else other} only"]
    return differences(a, b, ignore=OVERVIEW_OWN) if a.exists() else []


def overview_differences(one: Path, other: Path) -> list[str]:
    """What differs between the timeline overviews (popview.cache.overview) of two caches."""
    from popview.cache import overview

    return _companion_differences(one, other, overview.path_of, "a timeline overview")


def window_sums_differences(one: Path, other: Path) -> list[str]:
    """What differs between the window sums (popview.cache.window_sums) of two caches."""
    from popview.cache import window_sums

    return _companion_differences(one, other, window_sums.path_of, "window sums")


def assert_same_cache(one: Path, other: Path, attrs: str = "all") -> None:
    """The caches, and their timeline overviews and window sums, the same."""
    found = differences(one, other, attrs) + [f"timeline overview: {d}" for d in overview_differences(one, other)] \
        + [f"window sums: {d}" for d in window_sums_differences(one, other)]
    assert not found, "\n".join(found)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = differences(Path(argv[0]), Path(argv[1]))
    for line in found:
        print(line)
    print("the same" if not found else f"{len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
