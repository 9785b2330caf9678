"""Benchmark of the coupled trees on a big synthetic profile.

100k call paths (at most 30 deep) x 10k locations (16 locations with values
per call path: 1.6M values per metric). Median of several runs, each
including the repaint of what changed:
  open      - the metric and call trees show a new experiment (totals computed, rows drawn)
  expand    - expanding the call path with the most children
  recolour  - selecting a call path: the system tree and the topology get new values
Wall time and the GUI thread's CPU time are both printed: on a loaded
machine the wall time grows with the other jobs, the CPU time does not.

    python tests/benchmarks/bench_trees.py [--callpaths N] [--locations N] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from small import add_small  # noqa: E402

from popview.gui.state import AppState  # noqa: E402
from popview.gui.topology import TopologyPane  # noqa: E402
from popview.gui.trees import CallTreePane, MetricTreePane, SystemTreePane  # noqa: E402
from popview.gui.trees.source import profile_values  # noqa: E402
from popview.testing.synthetic_profile import ProfileExperiment, flat_definitions, random_profile  # noqa: E402


def timed(fn) -> float:
    """Wall ms; the GUI thread's CPU ms go to LAST_CPU (robust when other jobs load the machine)."""
    global LAST_CPU
    t, c = time.perf_counter(), time.thread_time()
    fn()
    LAST_CPU = (time.thread_time() - c) * 1e3
    return (time.perf_counter() - t) * 1e3


LAST_CPU = 0.0


def paint(*widgets) -> None:
    for w in widgets:
        w.grab()                      # renders the widget as a paint event would


def show(*panes) -> None:
    for p in panes:
        p.resize(500, 700)
        p.show()
    QApplication.processEvents()


def bench_open(profile, defs, repeat: int) -> tuple[list[float], list[float]]:
    state = AppState()
    metrics, calls = MetricTreePane(state), CallTreePane(state)
    show(metrics, calls)
    warm, cold = [], []
    for i in range(repeat):
        exp = ProfileExperiment(profile, defs, name=f"run{i}")      # a new experiment: nothing cached
        if i % 2:                                                     # as after the open worker warmed it
            profile_values(exp).callpath_values("time")
        ms = timed(lambda: (state.set_current(exp), paint(metrics, calls)))
        (warm if i % 2 else cold).append((ms, LAST_CPU))
    return warm, cold


def bench_expand(profile, defs, repeat: int) -> tuple[int, list[float]]:
    state = AppState()
    calls = CallTreePane(state)
    show(calls)
    state.set_current(ProfileExperiment(profile, defs))
    kids = np.bincount(profile.callpath_parent[profile.callpath_parent >= 0], minlength=profile.n_callpaths)
    wide = int(np.argmax(kids))
    for a in calls.model.forest.ancestors(wide):
        calls.view.expand(calls.model.index_of(a))
    out = []
    for _ in range(repeat):
        calls.view.collapse(calls.model.index_of(wide))
        paint(calls)
        out.append((timed(lambda: (calls.view.expand(calls.model.index_of(wide)), paint(calls))), LAST_CPU))
    return int(kids[wide]), out


def bench_recolour(profile, defs, repeat: int) -> tuple[list[float], float]:
    state = AppState()
    system, topo = SystemTreePane(state), TopologyPane(state)
    show(system, topo)
    state.set_current(ProfileExperiment(profile, defs))
    rng = np.random.default_rng(1)
    out = []
    for cp in rng.integers(1, profile.n_callpaths, repeat).tolist():
        out.append((timed(lambda: (state.select_callpath(int(cp)), paint(system, topo))), LAST_CPU))
    root = timed(lambda: (state.select_callpath(0), paint(system, topo)))
    return out, (root, LAST_CPU)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--callpaths", type=int, default=100_000)
    ap.add_argument("--locations", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=9, help="runs of each step (at least 2: warm and cold opens alternate)")
    add_small(ap, callpaths=300, locations=64, repeat=2)
    args = ap.parse_args()
    args.repeat = max(2, args.repeat)
    _app = QApplication.instance() or QApplication([])
    t = time.perf_counter()
    profile = random_profile(args.callpaths, args.locations)
    defs = flat_definitions(args.locations)
    print(f"profile: {profile.n_callpaths} call paths, {profile.n_locations} locations, "
          f"{len(profile.values['time'].value)} values per metric (built in {time.perf_counter() - t:.1f} s)")
    warm, cold = bench_open(profile, defs, args.repeat)
    n_kids, expand = bench_expand(profile, defs, args.repeat)
    recolour, root = bench_recolour(profile, defs, args.repeat)
    rows = [("open metric + call tree, profile warmed by the open worker", warm),
            ("open metric + call tree, nothing cached", cold),
            (f"expand a call path with {n_kids} children", expand),
            ("recolour system tree + topology after a call-path selection", recolour),
            (f"recolour after selecting the root (all {len(profile.values['time'].value)} values)", [root])]
    print(f"{'median of ' + str(args.repeat) + ' runs':64s} {'wall ms':>8s} {'GUI-thread CPU ms':>18s}")
    for label, samples in rows:
        wall = statistics.median(s[0] for s in samples)
        cpu = statistics.median(s[1] for s in samples)
        print(f"{label:64s} {wall:8.1f} {cpu:18.1f}")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

if __name__ == "__main__":
    main()
