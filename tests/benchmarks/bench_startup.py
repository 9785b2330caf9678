"""Start-up: how soon popview answers.

1. The command line (no display needed), each a fresh process, median of
   several runs after a warm-up, with the CPU seconds of the process and the
   load average:
     version    `popview --version`                      (target <= 0.1 s)
     info       a warm `popview info` on the EPOCH 16-rank trace's cache
     info 1 GB  the same on a 1 GB make_big_epoch.py trace's cache (written
                under --out when absent; ../shared/tools/make_big_epoch.py)
                                                         (target <= 0.15 s)
   and which heavy modules (numba, h5py, numpy, pandas, Qt) a warm info loads:
   none, since it reads the cache's stored summary (popview.cache.summary).
2. The window, `popview --demo`: seconds from launch to a painted window, and
   to the demo's three runs being open (needs a display; skipped without).

    python tests/benchmarks/bench_startup.py [--runs 7] [--out /tmp/popview-bench-startup] [--no-big]
    xvfb-run -a -s "-screen 0 1600x1000x24" python tests/benchmarks/bench_startup.py ...   # with the window
    ... --bundle dist/popview/popview     # the window of the PyInstaller bundle instead of this Python
    ... --small                           # seconds: a synthetic trace stands in for both traces

The commands run this source tree (PYTHONPATH) with bytecode written, as an
installed popview has it (PYTHONDONTWRITEBYTECODE is unset for them).

In-process window runs (this Python) use a probe: an application-wide event filter
that notes the first paint of the main window, in wall-clock seconds from
launch ("painted"), in CPU seconds of the whole process ("painted_cpu",
worker threads included) and of the GUI thread alone ("painted_main_cpu":
the start-up's critical path, about what the wall clock shows on an idle
machine; on a loaded machine the wall clock is longer). The bundle cannot take a
probe, so it is timed until X reports its mapped window (xwininfo).
The first run writes the demo into a fresh cache directory (first-use cost);
the others reuse it, as every later start does.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ahead import ready
from small import add_small

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
EPOCH16 = SHARED / "traces" / "pypop" / "mpi" / "epoch_example_traces" / "epoch_16proc.prv.gz"
MAKE_BIG = SHARED / "tools" / "make_big_epoch.py"
BIG_REPEATS = 73             # make_big_epoch.py's K for a 1.06 GB trace
HEAVY = ("numba", "h5py", "numpy", "pandas", "PySide6")
HEAVY_PROBE = ("import sys\nfrom popview.cli import main\ncode = main(sys.argv[1:])\n"
               f"print('HEAVY', ' '.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')\n"
               "raise SystemExit(code)")

PROBE = r"""
import json, os, sys, time
T0 = float(sys.argv[1])
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(["popview"])
marks = {}

def note_paint():
    if "painted" not in marks:
        t = os.times()
        marks.update(painted=time.time() - T0, painted_cpu=t.user + t.system, painted_main_cpu=time.thread_time())

class Probe(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and isinstance(obj, QMainWindow) and "painted" not in marks:
            QTimer.singleShot(0, note_paint)
            self.window = obj
            timer.start(10)
        return False

def poll():
    if len(probe.window.state.experiments) == 3 and not probe.window.jobs:
        marks["demo_open"] = time.time() - T0
        print(json.dumps(marks), flush=True)
        app.quit()

probe = Probe()
timer = QTimer()
timer.timeout.connect(poll)
app.installEventFilter(probe)
QTimer.singleShot(120_000, app.quit)
from popview.cli import main
main(["--demo"])
"""


def run_probe(env) -> dict:
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", PROBE, repr(t0)], env=env, capture_output=True, text=True,
                         timeout=180)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError(f"no timing from the probe:\n{out.stderr[-2000:]}")
    return json.loads(lines[-1])


def run_bundle(binary: str, env) -> dict:
    t0 = time.time()
    proc = subprocess.Popen([binary, "--demo"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.time() - t0 < 120:
            tree = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True).stdout
            if '("popview" "popview")' in tree:          # the main window's class, mapped
                return {"mapped": time.time() - t0}
            if proc.poll() is not None:
                raise RuntimeError(f"the bundle exited with status {proc.returncode}")
            time.sleep(0.02)
        raise RuntimeError(f"the bundle showed no window within 120 s:\n{tree}")
    finally:
        proc.terminate()
        proc.wait(10)


def cli_env(tmp: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), POPVIEW_STATE_DIR=os.path.join(tmp, "state"),
               XDG_CONFIG_HOME=os.path.join(tmp, "config"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed_process(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one run of `cmd`, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {out.returncode}:\n{out.stderr[-2000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, out.stdout


def inputs(args, out: Path) -> list[tuple[str, Path]]:
    """(label, trace) of the warm-info figures."""
    if args.small:
        sys.path.insert(0, str(ROOT))
        from popview.testing.synthetic import Shape, write

        trace = out / "small.prv"
        if not trace.exists():
            write(trace, Shape(processes=4, threads=2, iterations=50))
        return [("info (synthetic, small)", trace)]
    found = []
    if EPOCH16.exists():
        found.append(("info EPOCH 16", EPOCH16))
    else:
        print(f"{EPOCH16} is absent: no EPOCH 16 figure")
    if args.no_big:
        return found
    big = args.big_prv or out / "big_epoch.prv"
    if not big.exists():
        if not MAKE_BIG.exists():
            print(f"{MAKE_BIG} is absent: no 1 GB figure (give --big-prv)")
            return found
        print(f"writing {big} with make_big_epoch.py (K={BIG_REPEATS}) ...", flush=True)
        subprocess.run([sys.executable, str(MAKE_BIG), str(SHARED / "traces"), str(big), str(BIG_REPEATS)], check=True)
    found.append((f"info {big.stat().st_size / 1e9:.2f} GB", big))
    return found


def cli_figures(args, out: Path, tmp: str) -> None:
    env = cli_env(tmp)
    cache = out / "cache"
    py = [sys.executable, "-m", "popview"]
    cases = [("version", py + ["--version"])]
    for label, trace in inputs(args, out):
        wall, _, _ = timed_process(py + ["convert", str(trace), "--cache-dir", str(cache)], env)
        print(f"{label}: cache ready ({wall:.1f} s: converted now, or found)")
        cases.append((label, py + ["info", str(trace), "--cache-dir", str(cache)]))
    load = os.getloadavg()[0]
    figures = {label: [] for label, _ in cases}
    for i in range(args.runs + 1):                   # interleaved; the first round warms up (bytecode, page cache)
        for label, cmd in cases:
            wall, cpu, _ = timed_process(cmd, env)
            if i:
                figures[label].append((wall, cpu))
    print(f"command line, median of {args.runs} runs after a warm-up (load average {load:.1f} -> "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
    for label, runs in figures.items():
        walls = sorted(w for w, _ in runs)
        target = 0.1 if label == "version" else 0.15
        verdict = "OK" if statistics.median(walls) <= target else "MISSED"
        print(f"  {label:26s} median {statistics.median(walls):.3f} s  min {walls[0]:.3f}  max {walls[-1]:.3f}  "
              f"CPU median {statistics.median(c for _, c in runs):.3f} s  (target <= {target} s: {verdict})")
    for label, cmd in cases[1:]:
        probe = [sys.executable, "-c", HEAVY_PROBE, *cmd[3:]]
        heavy = timed_process(probe, env)[2].strip().splitlines()[-1].removeprefix("HEAVY ")
        print(f"  heavy modules loaded by {label}: {heavy}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "popview-bench-startup",
                        help="where the traces' caches (and the 1 GB trace, when not given) are written")
    parser.add_argument("--big-prv", type=Path, help="the 1 GB trace (default: written under --out)")
    parser.add_argument("--no-big", action="store_true", help="no 1 GB figure")
    parser.add_argument("--no-window", action="store_true", help="the command line only")
    parser.add_argument("--bundle", help="time this PyInstaller binary's window instead of this Python's")
    add_small(parser, runs=2)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="popview-bench-") as tmp:
        cli_figures(args, args.out, tmp)
    if args.no_window:
        return 0
    if not os.environ.get("DISPLAY"):
        print("window: skipped, no display (run under xvfb-run -a)")
        return 0
    print(f"kernels compiled ahead of time: {ready(ROOT, build=not args.small)}")    # as after a first run
    with tempfile.TemporaryDirectory(prefix="popview-bench-") as tmp:
        env = dict(os.environ, POPVIEW_CACHE_DIR=os.path.join(tmp, "cache"),
                   POPVIEW_STATE_DIR=os.path.join(tmp, "state"), XDG_CONFIG_HOME=os.path.join(tmp, "config"))
        env.pop("QT_QPA_PLATFORM", None)
        measure = (lambda: run_bundle(args.bundle, env)) if args.bundle else (lambda: run_probe(env))
        first = measure()
        print(f"window, first run (writes the demo): {json.dumps({k: round(v, 3) for k, v in first.items()})}")
        runs = [measure() for _ in range(0 if args.small else args.runs)] or [first]     # --small: the first alone
    for key in runs[0]:
        values = sorted(r[key] for r in runs)
        print(f"{key:10s} median {statistics.median(values):.3f} s  min {values[0]:.3f}  max {values[-1]:.3f}  "
              f"({len(values)} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
