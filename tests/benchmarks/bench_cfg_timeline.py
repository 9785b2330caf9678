"""Redraw of a cfg's derived IPC timeline (instructions / cycles) against the 100 ms budget.

    python tests/benchmarks/bench_cfg_timeline.py [--trace TRACE] [--cfg CFG] [--out DIR]

Without --trace: the 1 GB make_big_epoch trace (../shared/tools/make_big_epoch.py, EPOCH 16
ranks repeated 72 times, written under --out, default /tmp/popview-bench) when ../shared
exists; --synthetic-iterations N uses a small synthetic run instead (the size CI runs).
Without --cfg: parami's counters_PAPI/performance/IPC.cfg from ../shared, else the same
three windows written by popview's cfg writer. Times, in one process: reading the columns,
evaluating the window, building its pyramid, then the window's timeline tab (offscreen Qt,
1600 px wide) redrawn at full view, at 1 % of the run and at 1 ms windows. Prints the load
average and the peak memory.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from small import add_small

HERE = Path(__file__).resolve()
SHARED = next((p / "shared" for p in HERE.parents if (p / "shared" / "traces").is_dir()), None)
BUDGET_MS = 100.0
INS, CYC = 42000050, 42000059


def big_epoch(out: Path) -> Path:
    prv = out / "big_epoch.prv"
    if prv.exists() and prv.stat().st_size >= 1e9:
        return prv
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, str(SHARED / "tools" / "make_big_epoch.py"), str(SHARED / "traces"), str(prv),
                    "72"], check=True)
    return prv


def synthetic_trace(out: Path, iterations: int) -> Path:
    from popview.testing.synthetic import Shape, write

    out.mkdir(parents=True, exist_ok=True)
    prv = out / "cfg_timeline.prv"
    write(prv, Shape(processes=4, threads=1, iterations=iterations))
    return prv


def ipc_cfg(out: Path) -> Path:
    shared = SHARED / "traces" / "paraver-cfgs" / "parami" / "cfgs" / "counters_PAPI" / "performance" / "IPC.cfg" \
        if SHARED else None
    if shared is not None and shared.exists():
        return shared
    from popview.analysis.cfg import CfgView, Criterion, Derivation, Function, Window
    from popview.analysis.cfg.writer import save_cfg

    ins = Window("Instructions", 1, functions={"thread": Function("Next Evt Val")})
    ins.filters.criteria["evt_type"] = Criterion("=", (INS,))
    cyc = Window("cycles", 2, functions={"thread": Function("Next Evt Val")})
    cyc.filters.criteria["evt_type"] = Criterion("=", (CYC,))
    ipc = Window("Instructions per cycle", 3, derivation=Derivation("divide", (1, 2)), minimum_y=0.0,
                 maximum_y=1.5, color_mode="window_in_null_gradient_mode", gui={"window_open": "true"})
    path = out / "IPC.cfg"
    save_cfg(CfgView("bench", "3.4", "new", windows=[ins, cyc, ipc]), path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", type=Path)
    parser.add_argument("--cfg", type=Path)
    parser.add_argument("--out", type=Path, default=Path("/tmp/popview-bench"))
    parser.add_argument("--synthetic-iterations", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=10)
    add_small(parser, synthetic_iterations=100, repeat=2)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    import popview
    from popview.analysis.cfg import read_cfg
    from popview.analysis.cfg.evaluate import TraceColumns, evaluate_window
    from popview.analysis.cfg.paramedir import value_names
    from popview.analysis.cfg.timeline import shown_windows, window_timeline

    if args.trace:
        trace = args.trace
    elif args.synthetic_iterations or SHARED is None:
        trace = synthetic_trace(args.out, args.synthetic_iterations or 2000)
    else:
        trace = big_epoch(args.out)
    cfg = args.cfg or ipc_cfg(args.out)
    print(f"load before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    start = time.perf_counter()
    exp = popview.open(trace)
    print(f"trace: {trace} ({trace.stat().st_size / 1e6:,.0f} MB), opened in {time.perf_counter() - start:.1f} s")
    view = read_cfg(cfg)
    window = shown_windows(view)[-1]
    start = time.perf_counter()
    columns = TraceColumns.from_cache(exp.reader, exp.definitions)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    evaluated = evaluate_window(view, window.position, columns)
    eval_s = time.perf_counter() - start
    start = time.perf_counter()
    timeline = window_timeline(view, window, evaluated, columns.t_end, value_names(window, exp.definitions),
                               exp.definitions)
    pyramid_s = time.perf_counter() - start
    print(f"cfg {cfg.name}, window {window.name!r}: {len(evaluated.value):,} intervals on {evaluated.n_rows} rows "
          f"({columns.events['type'].size:,} events read)")
    print(f"first evaluation: read columns {read_s:.2f} s, evaluate {eval_s:.2f} s, pyramid {pyramid_s:.2f} s")
    del columns

    from PySide6.QtWidgets import QApplication

    from popview.gui.cfgviews import CfgTimelineTab

    app = QApplication.instance() or QApplication([])
    tab = CfgTimelineTab(exp, timeline)
    tab.resize(1600, 600)
    tab.show()
    app.processEvents()
    v = tab.view
    t_end = int(timeline.t_end)

    def timed(t0, t1) -> tuple[float, str]:
        v.set_window(t0, t1, record=False)
        start = time.perf_counter()
        v.redraw_now()
        app.processEvents()
        return (time.perf_counter() - start) * 1e3, v.last_picture.source

    timed(0, t_end)                      # warm up: the kernels' first calls
    rng = np.random.default_rng(1)
    results = {}
    for name, span in (("full view", t_end), ("1 % of the run", t_end // 100), ("1 ms", 1_000_000)):
        times, sources = [], set()
        for i in range(args.repeat):
            t0 = 0 if span >= t_end else int(rng.integers(0, t_end - span))
            ms, source = timed(t0 + (i % 2), t0 + span + (i % 2))
            times.append(ms)
            sources.add(source.split(" level")[0])
        results[name] = times
        print(f"redraw at {name:>14}: median {statistics.median(times):7.2f} ms  max {max(times):7.2f} ms  "
              f"({'/'.join(sorted(sources))}, n={len(times)}, budget {BUDGET_MS:.0f} ms: "
              f"{'within' if max(times) <= BUDGET_MS else 'OVER'})")
    print(f"width {int(v.vb.width())} px, rows {len(v.layout_rows)}")
    print(f"load after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"peak memory (RSS): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")
    exp.close()


if __name__ == "__main__":
    main()
