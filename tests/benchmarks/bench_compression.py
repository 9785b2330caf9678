"""Benchmark: which HDF5 filter the cache uses, measured on real columns.

Reads the records of an existing popview cache (e.g. the one bench_convert.py
made) and rewrites its event and state columns with several filters, all with
64k-row chunks and shuffle, reporting write/read speed and ratio; then the
cost of the checksums the cache carries: Fletcher32 per chunk (the "chosen"
row against plain zstd3+shuffle) and the whole-file xxh3 digest checked at
every opening.

usage: python tests/benchmarks/bench_compression.py CACHE.h5 [--rows N]
       python tests/benchmarks/bench_compression.py --small      # a small synthetic cache, made here
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import h5py
import hdf5plugin
from small import add_small, in_scratch

FILTERS = {
    "none": {},
    "gzip1+shuffle": dict(compression="gzip", compression_opts=1, shuffle=True),
    "gzip4+shuffle": dict(compression="gzip", compression_opts=4, shuffle=True),
    "lzf+shuffle": dict(compression="lzf", shuffle=True),
    "zstd3+shuffle": dict(**hdf5plugin.Zstd(clevel=3), shuffle=True),
    "zstd3+shuffle+fletcher32 (chosen)": dict(**hdf5plugin.Zstd(clevel=3), shuffle=True, fletcher32=True),
    "blosc2-zstd3+shuffle": dict(**hdf5plugin.Blosc2(cname="zstd", clevel=3, filters=hdf5plugin.Blosc2.SHUFFLE)),
    "blosc-lz4+shuffle": dict(**hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE)),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cache", nargs="?", help="a popview cache (with --small: a small synthetic one is made)")
    ap.add_argument("--rows", type=int, default=10_000_000)
    add_small(ap, rows=20_000)
    args = ap.parse_args()
    if args.cache is None:
        return in_scratch(ap, args.small, "a cache (e.g. the one bench_convert.py made)",
                          lambda tmp: measure(small_cache(tmp), args.rows))
    return measure(args.cache, args.rows)


def small_cache(tmp: Path) -> str:
    """A converted synthetic trace (--small)."""
    import popview
    from popview.testing.synthetic import Shape, write

    write(tmp / "small.prv", Shape(processes=4, threads=2, iterations=200))
    with popview.open(tmp / "small.prv", cache_dir=tmp / "cache") as exp:
        return str(exp.cache_path)


def measure(cache: str, rows: int) -> int:
    with h5py.File(cache, "r") as f:
        cols = {f"{t}/{c}": f[t][c][:rows] for t in ("events", "states") for c in f[t]
                if c not in ("offsets",) and not c.startswith("sparse") and f[t][c].ndim == 1}
    raw = sum(a.nbytes for a in cols.values())
    print(f"{raw / 1e6:.0f} MB raw in {len(cols)} columns")
    print(f"{'filter':34s} {'write MB/s':>10s} {'read MB/s':>10s} {'ratio':>7s}")
    for name, opts in FILTERS.items():
        fd, path = tempfile.mkstemp(suffix=".h5")
        os.close(fd)
        t0 = time.perf_counter()
        with h5py.File(path, "w") as f:
            for key, a in cols.items():
                f.create_dataset(key.replace("/", "_"), data=a, chunks=(min(65536, len(a)),), **opts)
        tw = time.perf_counter() - t0
        size = os.path.getsize(path)
        t0 = time.perf_counter()
        with h5py.File(path, "r") as f:
            for key in f:
                f[key][:]
        tr = time.perf_counter() - t0
        os.unlink(path)
        print(f"{name:34s} {raw / 1e6 / tw:10.0f} {raw / 1e6 / tr:10.0f} {raw / size:7.2f}")
    digest_cost(cache)
    return 0


def digest_cost(cache: str) -> None:
    """Seconds of the whole-file digest an opening checks (best of 3, file in the page cache)."""
    from popview.cache import integrity

    with open(cache, "rb") as f:
        room = integrity.userblock_size(f)
    best = min(_timed(integrity._file_digest, cache, room) for _ in range(3))
    size = os.path.getsize(cache)
    print(f"whole-file xxh3 digest of the cache: {best:.3f} s for {size / 1e6:.0f} MB ({size / 1e6 / best:.0f} MB/s)")


def _timed(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


if __name__ == "__main__":
    raise SystemExit(main())
