"""Opening a trace in the window: when the run appears, when its timeline draws, and the
longest stall of the GUI thread's event loop meanwhile (a QTimer probe every 10 ms).

    python tests/benchmarks/bench_open_stall.py TRACE --cache-dir DIR [--no-overview] [--panes all|timeline]
    python tests/benchmarks/bench_open_stall.py --small      # a small synthetic hybrid run, no overview

TRACE is converted into DIR first when DIR has no cache of it (as `popview convert` does,
without the timeline overview; not timed). --no-overview removes the cache's timeline
overview (popview.cache.overview) before the window opens it, so that the window builds
it, as for a trace `popview convert` converted. Runs offscreen; prints one line per figure:
seconds from open_paths to the run in the window (appear), to the Timeline pane's view
(timeline), to nothing running any more (idle), and the longest gap between two probe
ticks (stall) with the phase it fell in.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from small import add_small, in_scratch


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("trace", type=Path, nargs="?")
    parser.add_argument("--cache-dir", type=Path)
    parser.add_argument("--no-overview", action="store_true")
    parser.add_argument("--panes", choices=("all", "timeline"), default="all")
    parser.add_argument("--stacks", type=float, default=0.0, metavar="MS",
                        help="print every thread's stack whenever the GUI thread has not ticked for MS ms")
    add_small(parser)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.trace is None:
        return in_scratch(parser, args.small, "a TRACE and --cache-dir", lambda tmp: _small(args, tmp))
    if args.cache_dir is None:
        parser.error("give --cache-dir")
    return measure(args)


def _small(args, tmp: Path) -> int:
    from popview.testing import synthetic

    args.trace, args.cache_dir, args.no_overview = tmp / "small.prv", tmp / "cache", True
    synthetic.write(args.trace, synthetic.Shape(processes=2, threads=2, iterations=4, work_ns=2_000_000))
    return measure(args)


def measure(args) -> int:
    """Open args.trace in a window, print the figures (see the module's docstring)."""

    from popview.cache import overview
    from popview.experiment import convert

    cache, _ = convert(args.trace, args.cache_dir)
    if args.no_overview:
        overview.remove(cache)

    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from popview.gui import jobs
    from popview.gui.mainwindow import PANES, MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.Format.IniFormat)
    panes = PANES if args.panes == "all" else [s for s in PANES if s.module in (
        "popview.gui.experiments", "popview.gui.logpane", "popview.gui.timeline")]
    window = MainWindow(settings=settings, cache_dir=args.cache_dir, panes=panes)
    window.resize(1600, 1000)
    window.show()
    marks: dict[str, float] = {}
    gaps: list[tuple[float, float, str, float]] = []   # (gap s, at s, phase, the GUI thread's CPU s in it)
    state = {"last": 0.0, "t0": 0.0, "cpu": 0.0}

    def phase() -> str:
        return "after timeline" if "timeline" in marks else "after appear" if "appear" in marks else "opening"

    def tick() -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        gaps.append((now - state["last"], now - state["t0"], phase(), cpu - state["cpu"]))
        state["last"], state["cpu"] = now, cpu
        pane = window.panes.get("Timeline")
        if "appear" not in marks and window.state.experiments:
            marks["appear"] = now - state["t0"]
        if "timeline" not in marks and pane is not None and pane.view is not None:
            pane.view.redraw_now()
            marks["timeline"] = time.perf_counter() - state["t0"]
        if "appear" in marks and not window.jobs and jobs.idle() and "idle" not in marks and (
                pane is None or pane.view is not None or not pane._preparing):
            marks["idle"] = now - state["t0"]
            QTimer.singleShot(500, app.quit)

    probe = QTimer(interval=10, timeout=tick)

    def start() -> None:
        state["t0"] = state["last"] = time.perf_counter()
        state["cpu"] = time.thread_time()
        probe.start()
        window.open_paths([args.trace])

    QTimer.singleShot(200, start)
    if args.stacks:
        _watch(state, args.stacks / 1000)
    app.exec()
    probe.stop()
    for key in ("appear", "timeline", "idle"):
        print(f"{key}: {marks[key]:.2f} s" if key in marks else f"{key}: never")
    worst = max(gaps)
    print(f"stall: {worst[0] * 1000:.0f} ms at {worst[1]:.2f} s ({worst[2]}; the GUI thread's own CPU in it: "
          f"{worst[3] * 1000:.0f} ms)")
    for name in ("opening", "after appear", "after timeline"):
        inside = [g for g in gaps if g[2] == name]
        if inside:
            print(f"  longest {name}: {max(inside)[0] * 1000:.0f} ms over {len(inside)} ticks")
    print(f"errors: {window.errors}")
    window.close()
    return 0


def _watch(state: dict, after: float) -> None:
    """A thread printing every thread's stack while the GUI thread has not ticked for `after` s."""
    import threading
    import traceback

    main_id = threading.main_thread().ident

    def watch() -> None:
        seen = None
        while True:
            time.sleep(after / 4)
            last = state["last"]
            if last and time.perf_counter() - last > after and seen != last:
                seen = last
                frames = sys._current_frames()
                names = {t.ident: t.name for t in threading.enumerate()}
                print(f"--- GUI thread {1000 * (time.perf_counter() - last):.0f} ms without a tick:", flush=True)
                for ident, frame in frames.items():
                    if ident == threading.get_ident():
                        continue
                    mark = "GUI thread" if ident == main_id else names.get(ident, ident)
                    print(f"  [{mark}]\n" + "".join(traceback.format_stack(frame)[-6:]), flush=True)

    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
