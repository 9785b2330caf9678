"""Benchmark of the Distribution pane (popview.gui.distribution): drawing the box
plot and the sorted bars of N locations' values, including the paint. Median
of several runs, wall time.

    python tests/benchmarks/bench_distribution.py [--locations N] [--repeat N]
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

from popview.analysis.distribution import sorted_locations, summarise  # noqa: E402
from popview.gui.distribution import BARS, BOX, DistributionPane  # noqa: E402
from popview.gui.state import AppState  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locations", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    add_small(ap, locations=1000, repeat=2)
    args = ap.parse_args()
    app = QApplication.instance() or QApplication([])
    pane = DistributionPane(AppState())
    pane.resize(600, 400)
    pane.show()
    app.processEvents()
    v = np.random.default_rng(1).gamma(2.0, 1.0, args.locations)
    pane.values, pane.unit, pane.what = v, "sec", "benchmark"
    t = time.perf_counter()
    pane.summary, pane.order = summarise(v), sorted_locations(v)
    stats = time.perf_counter() - t
    print(f"{args.locations} locations; statistics and order: {stats:.3f} s")
    for kind in (BOX, BARS):
        times = []
        for _ in range(args.repeat):
            pane.kind.blockSignals(True)
            pane.kind.setCurrentIndex(pane.kind.findData(kind))
            pane.kind.blockSignals(False)
            t = time.perf_counter()
            pane.draw()
            pane.plot.grab()
            times.append(time.perf_counter() - t)
        print(f"{kind:5s} draw + paint: median {statistics.median(times):.3f} s (best {min(times):.3f} s)")


if __name__ == "__main__":
    main()
