"""Benchmark of the analysis engine (not collected by pytest).

1. Writes a synthetic hybrid trace of about 10^8 records (32 x 4 threads,
   2 OpenMP regions per iteration, MPI, counters), converts it, then times
   the full metric tree of every model for each focus of analysis, each on
   a freshly opened experiment (nothing cached in memory).
   Target: <= 0.2 s per tree (the ideal-network replay is timed apart).
2. Writes a 5-run series (1 to 16 processes x 4 threads) and times the
   scaling table of every model from freshly opened experiments.
   Target: <= 1 s.

    python tests/benchmarks/bench_metrics.py [--records 1e8] [--dir /tmp/popview-bench] [--replay]
                                             [--series-iterations 2000]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pandas  # noqa: F401 - imported before timing: a process-start cost, not a query cost
from small import add_small

import popview
from popview.testing.synthetic import Shape, write

MODELS = ("pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path", "computation", "io")
RECORDS_PER_ITERATION = 2528     # of the shape below (states + event lines + messages)


def big_shape(records: float) -> Shape:
    return Shape(processes=32, threads=4, iterations=max(1, int(records / RECORDS_PER_ITERATION)),
                 work_ns=400_000, rank_weights=tuple(1 + 0.02 * r for r in range(32)), serial_fraction=0.1,
                 parallel_regions=2, fork_ns=2_000, init_ns=5_000_000, fini_ns=2_000_000)


def exp_iterations(path: Path) -> int:
    """Iterations of the trace written for `path` (its name holds the records asked for)."""
    return big_shape(float(path.stem.split("_")[1])).iterations


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def ensure(path: Path, shape: Shape) -> None:
    if path.exists():
        print(f"reusing {path} ({path.stat().st_size / 1e9:.2f} GB)")
        return
    expected, dt = timed(lambda: write(path, shape))
    size = path.stat().st_size
    print(f"wrote {path}: {expected.counts['records']:,} records, {size / 1e9:.2f} GB in {dt:.1f} s "
          f"({size / 1e6 / dt:.0f} MB/s)")


def bench_trees(path: Path, cache: Path, replay: bool) -> None:
    exp, dt = timed(lambda: popview.open(path, cache_dir=cache))
    print(f"open (convert if needed): {dt:.1f} s; cache {exp.cache_path.stat().st_size / 1e9:.2f} GB")
    t_end = exp.definitions.t_end
    exp.close()
    last = min(200, int(exp_iterations(path)) - 1)
    foci = ["whole", "callpath:main/timestep", f"window:{t_end * 0.3 / 1e9}:{t_end * 0.6 / 1e9}",
            f"iterations:main/timestep:{min(10, last // 4)}:{last}", "auto"]
    worst = 0.0
    for focus in foci:
        for model in MODELS:
            e = popview.open(path, cache_dir=cache)
            cpu = time.process_time()
            tree, dt = timed(lambda: e.metrics(model, focus, use_replay=False))
            cpu = time.process_time() - cpu       # on a loaded machine, beside the wall time
            worst = max(worst, dt)
            print(f"  {focus[:40]:40s} {model:22s} {dt * 1000:7.1f} ms (cpu {cpu * 1000:7.1f} ms)  "
                  f"PE={tree.value('parallel_efficiency') or tree.value('hybrid_parallel_efficiency')}")
            e.close()
    print(f"slowest metric tree: {worst * 1000:.1f} ms (target 200 ms)")
    if replay:
        e = popview.open(path, cache_dir=cache)
        _, dt = timed(lambda: e.metrics("pop-mpi", "whole"))
        print(f"pop-mpi whole run with the ideal-network replay: {dt:.1f} s")
        e.close()


def bench_series(directory: Path, cache: Path, iterations: int) -> None:
    paths = []
    for P in (1, 2, 4, 8, 16):
        shape = Shape(processes=P, threads=4, iterations=iterations, work_ns=int(400_000 * 16 / P),
                      rank_weights=tuple(1 + 0.05 * r for r in range(P)), serial_fraction=0.1, parallel_regions=2)
        path = directory / f"series_{P}x4_{iterations}.prv"
        ensure(path, shape)
        paths.append(path)
        popview.open(path, cache_dir=cache).close()
    s, dt = timed(lambda: popview.series(paths, cache_dir=cache, use_replay=False))
    tables = {}
    t2 = time.perf_counter()
    for model in MODELS[:4]:
        tables[model] = s.table(model)
    dt2 = time.perf_counter() - t2
    print(f"5-run series: open + inputs {dt * 1000:.0f} ms, 4 model tables {dt2 * 1000:.0f} ms, "
          f"total {(dt + dt2) * 1000:.0f} ms (target 1000 ms)")
    print(tables["pop-mpi"].drop(columns=["kind"]).round(4).to_string())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=float, default=1e8)
    ap.add_argument("--dir", default="/tmp/popview-bench")
    ap.add_argument("--replay", action="store_true", help="also time the ideal-network replay once")
    ap.add_argument("--series-iterations", type=int, default=2000, help="iterations of each run of the series")
    add_small(ap, records=1e5, series_iterations=5)
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    cache = d / "cache"
    print(f"machine: {os.cpu_count()} cores")
    big = d / f"big_{int(args.records):d}.prv"
    ensure(big, big_shape(args.records))
    bench_trees(big, cache, args.replay)
    bench_series(d, cache, args.series_iterations)


if __name__ == "__main__":
    main()
