"""Benchmark: which HDF5 filter the cache uses, measured on real columns.

Reads the records of an existing popview cache (e.g. the one bench_convert.py
made) and rewrites its event and state columns with several filters, all with
64k-row chunks and shuffle, reporting write/read speed and ratio.

usage: python tests/benchmarks/bench_compression.py CACHE.h5 [--rows N]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import h5py
import hdf5plugin
import numpy as np

FILTERS = {
    "none": {},
    "gzip1+shuffle": dict(compression="gzip", compression_opts=1, shuffle=True),
    "gzip4+shuffle": dict(compression="gzip", compression_opts=4, shuffle=True),
    "lzf+shuffle": dict(compression="lzf", shuffle=True),
    "zstd3+shuffle (chosen)": dict(**hdf5plugin.Zstd(clevel=3), shuffle=True),
    "blosc2-zstd3+shuffle": dict(**hdf5plugin.Blosc2(cname="zstd", clevel=3, filters=hdf5plugin.Blosc2.SHUFFLE)),
    "blosc-lz4+shuffle": dict(**hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE)),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cache")
    ap.add_argument("--rows", type=int, default=10_000_000)
    args = ap.parse_args()
    with h5py.File(args.cache, "r") as f:
        cols = {f"{t}/{c}": f[t][c][: args.rows] for t in ("events", "states") for c in f[t]
                if c not in ("offsets",) and not c.startswith("sparse") and f[t][c].ndim == 1}
    raw = sum(a.nbytes for a in cols.values())
    print(f"{raw / 1e6:.0f} MB raw in {len(cols)} columns")
    print(f"{'filter':26s} {'write MB/s':>10s} {'read MB/s':>10s} {'ratio':>7s}")
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
        print(f"{name:26s} {raw / 1e6 / tw:10.0f} {raw / 1e6 / tr:10.0f} {raw / size:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
