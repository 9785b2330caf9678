"""Benchmark: conversion of a >= 1 GB Paraver trace into the cache.

Reports throughput (MB/s of .prv text), peak memory of the converting
process, cache size relative to the text, time to reopen from the cache,
and, in the same run, the same trace parsed by a plain pandas.read_csv-
per-chunk loader (the way PyPOP's prv.py works) as a ratio.

usage: python tests/benchmarks/bench_convert.py [--prv TRACE] [--out DIR] [--pandas-mb N] [--synthetic-mb N]

Without --prv it writes a real-shaped trace: the EPOCH 16-rank Extrae trace
repeated in time (../shared/tools/make_big_epoch.py) when ../shared exists,
else (or with --synthetic-mb N: a trace of about N MB, the size CI runs) a
synthetic one from popview.testing.synthetic.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from small import add_small

HERE = Path(__file__).resolve()
SHARED = HERE.parents[3] / "shared"

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import popview
import popview.experiment, popview.readers.paraver, popview.cache.reader, popview.cache.writer   # what opening loads (lazily)
t_import = time.perf_counter() - t0
t0, c0 = time.perf_counter(), time.process_time()
exp = popview.open(sys.argv[1], cache_dir=sys.argv[2], force=sys.argv[3] == "1")
elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
info = exp.info()
print(json.dumps({"seconds": elapsed, "cpu_s": cpu, "import_s": t_import, "converted": exp.converted,
                  "cache": str(exp.cache_path), "records": info["records"],
                  # this process and the derived-data process it starts: the sum bounds their joint peak
                  "maxrss_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024}))
"""


VERIFY = r"""
import json, sys, time
import h5py
from popview.cache import integrity
best = {}
for _ in range(3):
    t0 = time.perf_counter()
    with h5py.File(sys.argv[1], "r") as f:
        t1 = time.perf_counter()
        integrity.verify(f)
        t2 = time.perf_counter()
    best["open_s"] = min(best.get("open_s", 1e9), t1 - t0)
    best["verify_s"] = min(best.get("verify_s", 1e9), t2 - t1)
print(json.dumps(best))
"""


def verify_cost(cache: Path) -> dict:
    """Seconds to open the HDF5 file and to verify every checksum of it (best of 3)."""
    out = subprocess.run([sys.executable, "-c", VERIFY, str(cache)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_child(prv: Path, cache_dir: Path, force: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(prv), str(cache_dir), "1" if force else "0"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def make_trace(out: Path, synthetic_mb: int = 0) -> Path:
    prv = out / "big_epoch.prv"
    tool = SHARED / "tools" / "make_big_epoch.py"
    if not synthetic_mb and prv.exists() and prv.stat().st_size >= 1e9:
        return prv
    if not synthetic_mb and tool.exists():
        subprocess.run([sys.executable, str(tool), str(SHARED / "traces"), str(prv), "72"], check=True)
        return prv
    return synthetic_trace(out, synthetic_mb or 1050)


def synthetic_trace(out: Path, megabytes: int) -> Path:
    """A hybrid 16 x 4 run from the project's synthetic generator, about `megabytes` MB of text."""
    from popview.testing.synthetic import Shape, write

    prv = out / f"synthetic_{megabytes}mb.prv"
    if not prv.exists():
        iterations = max(1, int(megabytes * 1e6 / 80_000))   # about 80 kB of text an iteration at 16 x 4
        write(prv, Shape(processes=16, threads=4, iterations=iterations, work_ns=400_000,
                         rank_weights=tuple(1 + 0.02 * r for r in range(16)), serial_fraction=0.1))
    return prv


def pandas_baseline(prv: Path, limit_bytes: int) -> tuple[float, int]:
    """Parse the first `limit_bytes` of the body with pandas.read_csv per chunk."""
    import numpy as np
    import pandas as pd

    t0 = time.perf_counter()
    done = 0
    with open(prv, "rb") as f:
        f.readline()
        head = f.tell()
        width = 64
        reader = pd.read_csv(f, sep=":", header=None, names=range(width), chunksize=1_000_000,
                             engine="c", comment="#", dtype=str, on_bad_lines="skip")
        for chunk in reader:
            kind = chunk[0]
            states = chunk[kind == "1"].iloc[:, 1:8].astype(np.int64)
            ev = chunk[kind == "2"]
            pairs = []
            for k in range(6, width - 1, 2):
                sel = ev[k].notna()
                if not sel.any():
                    break
                pairs.append(pd.DataFrame({"task": ev.loc[sel, 3], "thread": ev.loc[sel, 4], "time": ev.loc[sel, 5],
                                           "type": ev.loc[sel, k], "value": ev.loc[sel, k + 1]}).astype(np.int64))
            events = pd.concat(pairs) if pairs else None
            comms = chunk[kind == "3"].iloc[:, 1:15].astype(np.int64)
            del states, events, comms
            done = f.tell() - head
            if done >= limit_bytes:
                break
    return time.perf_counter() - t0, done


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prv", type=Path)
    ap.add_argument("--out", type=Path, default=Path("/tmp/popview-bench"))
    ap.add_argument("--pandas-mb", type=int, default=0, help="limit the pandas baseline to N MB (0 = all)")
    ap.add_argument("--synthetic-mb", type=int, default=0,
                    help="convert a synthetic trace of about N MB instead of the 1 GB real-shaped one")
    add_small(ap, synthetic_mb=2, pandas_mb=1)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    prv = args.prv or make_trace(args.out, args.synthetic_mb)
    size = prv.stat().st_size
    cache_dir = args.out / "cache"
    cache_dir.mkdir(exist_ok=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"input: {prv} ({size / 1e6:.0f} MB of .prv text)")
    conv = run_child(prv, cache_dir, force=True)
    cache_size = Path(conv["cache"]).stat().st_size
    reopen = [run_child(prv, cache_dir, force=False) for _ in range(3)]
    assert not any(r["converted"] for r in reopen)
    mbps = size / 1e6 / conv["seconds"]
    print(f"records: {conv['records']}")
    print(f"convert: {conv['seconds']:.1f} s = {mbps:.0f} MB/s, peak RSS {conv['maxrss_mb']:.0f} MB "
          f"(load {os.getloadavg()[0]:.1f})")
    print(f"cache:   {cache_size / 1e6:.0f} MB = {cache_size / size:.3f} x the .prv text")
    print(f"reopen:  {min(r['seconds'] for r in reopen):.3f} s (best of 3, excluding {reopen[0]['import_s']:.2f} s of imports; "
          f"CPU {min(r['cpu_s'] for r in reopen):.3f} s; load {os.getloadavg()[0]:.1f})")
    cost = verify_cost(Path(conv["cache"]))
    print(f"verify:  {cost['verify_s']:.3f} s of the reopen checks every checksum of the cache "
          f"({cache_size / 1e6 / max(cost['verify_s'], 1e-9):.0f} MB/s; HDF5 open alone {cost['open_s']:.3f} s)")
    limit = args.pandas_mb * 1_000_000 if args.pandas_mb else size
    pd_s, pd_bytes = pandas_baseline(prv, limit)
    pd_mbps = pd_bytes / 1e6 / pd_s
    print(f"pandas.read_csv per chunk: {pd_bytes / 1e6:.0f} MB in {pd_s:.1f} s = {pd_mbps:.0f} MB/s "
          f"(parse only, no sort, no cache) -> popview is {mbps / pd_mbps:.1f}x faster")
    print(f"targets: >= 100 MB/s {'OK' if mbps >= 100 else 'MISSED'}; peak <= 1.5 GB "
          f"{'OK' if conv['maxrss_mb'] <= 1536 else 'MISSED'}; reopen <= 0.5 s "
          f"{'OK' if min(r['seconds'] for r in reopen) <= 0.5 else 'MISSED'}; cache <= 0.5 x "
          f"{'OK' if cache_size / size <= 0.5 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
