"""Benchmark: difference of two large profiles (popview.analysis.algebra).

Two profiles of the same call tree (a random tree of N call paths) over L
locations, each call path measured on a random K of the locations (values
differ between the two), then A - B aligned and coalesced.

usage: python tests/benchmarks/bench_algebra.py [--callpaths 100000] [--locations 10000] [--per-callpath 100]
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from small import add_small

from popview.analysis import algebra
from popview.model.definitions import Region
from popview.model.profile import MetricDef, MetricValues, Profile


def make(n_cp: int, n_loc: int, per_cp: int, seed: int) -> Profile:
    rng = np.random.default_rng(seed)
    parent = np.r_[-1, rng.integers(0, np.arange(1, n_cp))]    # parent before child: pre-order numbering
    parent = _preorder_renumber(parent)
    regions = [Region(f"region_{i}") for i in range(n_cp)]
    p = Profile(regions=regions, callpath_parent=parent, callpath_region=np.arange(n_cp), n_locations=n_loc,
                metrics=[MetricDef("time", "Time", "sec")])
    cp = np.repeat(np.arange(n_cp), per_cp)
    loc = rng.integers(0, n_loc, len(cp))
    p.values["time"] = MetricValues.from_coo(n_cp, cp, loc, rng.random(len(cp)))
    return p


def _preorder_renumber(parent: np.ndarray) -> np.ndarray:
    order = algebra._preorder(parent)
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return np.where(parent[order] >= 0, rank[np.maximum(parent[order], 0)], -1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--callpaths", type=int, default=100_000)
    ap.add_argument("--locations", type=int, default=10_000)
    ap.add_argument("--per-callpath", type=int, default=100, help="locations measured per call path")
    ap.add_argument("--repeat", type=int, default=3)
    add_small(ap, callpaths=2000, locations=100, per_callpath=5, repeat=1)
    args = ap.parse_args()
    a = make(args.callpaths, args.locations, args.per_callpath, 1)
    b = make(args.callpaths, args.locations, args.per_callpath, 2)
    b.callpath_parent, b.regions = a.callpath_parent, a.regions        # the same program
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}")
    print(f"profiles: {args.callpaths:,} call paths x {args.locations:,} locations, "
          f"{len(a.values['time'].value):,} values each")
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        d = algebra.difference(a, b)
        times.append(time.perf_counter() - t0)
    assert d.profile.n_callpaths == args.callpaths
    print(f"difference: median {sorted(times)[len(times) // 2]:.3f} s, best {min(times):.3f} s "
          f"over {args.repeat} (target <= 1 s at 1e5 x 1e4)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
