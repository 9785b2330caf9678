"""Start-up of `popview --demo`: seconds from launch to a painted window, and
to the demo's three runs being open. Median of several runs.

Needs a display: run it as
    xvfb-run -a -s "-screen 0 1600x1000x24" python tests/benchmarks/bench_startup.py [--runs 7]
    ... --bundle dist/popview/popview     # the PyInstaller bundle instead of this Python

In-process runs (this Python) use a probe: an application-wide event filter
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
import statistics
import subprocess
import sys
import tempfile
import time

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--bundle", help="time this PyInstaller binary instead of this Python")
    args = parser.parse_args()
    if not os.environ.get("DISPLAY"):
        print("needs a display: run under xvfb-run -a", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="popview-bench-") as tmp:
        env = dict(os.environ, POPVIEW_CACHE_DIR=os.path.join(tmp, "cache"),
                   POPVIEW_STATE_DIR=os.path.join(tmp, "state"), XDG_CONFIG_HOME=os.path.join(tmp, "config"))
        env.pop("QT_QPA_PLATFORM", None)
        measure = (lambda: run_bundle(args.bundle, env)) if args.bundle else (lambda: run_probe(env))
        first = measure()
        print(f"first run (writes the demo): {json.dumps({k: round(v, 3) for k, v in first.items()})}")
        runs = [measure() for _ in range(args.runs)]
    for key in runs[0]:
        values = sorted(r[key] for r in runs)
        print(f"{key:10s} median {statistics.median(values):.3f} s  min {values[0]:.3f}  max {values[-1]:.3f}  "
              f"({len(values)} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
