"""First run on a new machine: seconds from an EMPTY numba cache (and an
empty popview cache) to

  info     the output of `popview info` on the EPOCH 16-rank trace,
  metrics  the output of `popview metrics` on it,
  painted  the first paint of the `popview --demo` window,
  demo     the demo's three runs open in that window (offscreen Qt),

each with the CPU seconds (user + system) of the whole process tree, the
compile helper and the derived-data process included: on a machine shared
with other jobs, the figure that does not depend on the load.

    python tests/benchmarks/bench_first_run.py [--runs 2] [--tree DIR]...

Every measurement is a fresh process with fresh cache directories, so the
kernels compile as on a new machine. With several --tree (source trees of
popview, e.g. before and after a change) the runs are interleaved, so that
the trees see the same load of a shared machine; the load average is
printed with every figure. Reads ../shared/traces; skips `info` and
`metrics` when absent.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
EPOCH16 = HERE.parent / "shared" / "traces" / "pypop" / "mpi" / "epoch_example_traces" / "epoch_16proc.prv.gz"
sys.path.insert(0, str(Path(__file__).parent))
from bench_startup import PROBE as STARTUP_PROBE  # noqa: E402  (the in-process first-paint probe)
from small import add_small  # noqa: E402

PROBE = STARTUP_PROBE.replace("QTimer.singleShot(120_000, app.quit)", "QTimer.singleShot(600_000, app.quit)")


KEEP_NUMBA_CACHE = False      # --keep-numba-cache: the environment's (a smoke run, not a measurement)
NO_HELPER = False             # --no-helper: without the first-run compile helper (popview.precompile)


def fresh_env(tree: Path, tmp: str) -> dict:
    numba_cache = os.environ.get("NUMBA_CACHE_DIR") if KEEP_NUMBA_CACHE else None
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=numba_cache or os.path.join(tmp, "numba"),
               POPVIEW_CACHE_DIR=os.path.join(tmp, "cache"), POPVIEW_STATE_DIR=os.path.join(tmp, "state"),
               XDG_CACHE_HOME=os.path.join(tmp, "xdg-cache"), XDG_CONFIG_HOME=os.path.join(tmp, "config"),
               QT_QPA_PLATFORM="offscreen", POPVIEW_AOT="0")
    # POPVIEW_AOT=0: the first run's compiles as measured here; the module of kernels compiled ahead of
    # time (docs/cache.md, Kernels) is built in the background after a first command, outliving it
    if NO_HELPER:
        env["POPVIEW_PRECOMPILE"] = "0"
    elif not KEEP_NUMBA_CACHE:            # measuring a new machine: as a user has it (a smoke run: as it is)
        env.pop("POPVIEW_PRECOMPILE", None)
    return env


def children_cpu() -> float:
    """User + system seconds of the child processes waited for so far (theirs included)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_command(tree: Path, args: list[str]) -> dict:
    name = args[0]
    with tempfile.TemporaryDirectory(prefix="popview-first-") as tmp:
        env = fresh_env(tree, tmp)
        t0, cpu0 = time.perf_counter(), children_cpu()
        out = subprocess.run([sys.executable, "-m", "popview", *args, "--cache-dir", os.path.join(tmp, "cache")],
                             env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
                             cwd=tmp)     # not the caller's folder: `-m` puts it before PYTHONPATH (--tree)
        took, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    if out.returncode:
        raise RuntimeError(f"popview {' '.join(args)} failed:\n{out.stderr[-2000:]}")
    return {name: took, f"{name} cpu": cpu}


def timed_demo(tree: Path) -> dict:
    import json
    with tempfile.TemporaryDirectory(prefix="popview-first-") as tmp:
        env = fresh_env(tree, tmp)
        t0, cpu0 = time.time(), children_cpu()
        out = subprocess.run([sys.executable, "-c", PROBE, repr(t0)], env=env, capture_output=True, text=True,
                             timeout=600, stdin=subprocess.DEVNULL, cwd=tmp)     # as above
        cpu = children_cpu() - cpu0
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError(f"no timing from the demo probe:\n{out.stderr[-2000:]}")
    marks = json.loads(lines[-1])
    return {"painted": marks["painted"], "painted cpu": marks["painted_cpu"],
            "demo": marks.get("demo_open", float("nan")), "demo cpu": cpu}


def measure(tree: Path, what: list[str], trace: Path = EPOCH16) -> dict:
    out = {}
    for name in what:
        if name in ("info", "metrics") and not trace.exists():
            continue
        load = os.getloadavg()[0]
        try:
            got = timed_demo(tree) if name == "demo" else timed_command(tree, [name, str(trace)])
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"  {tree} {name}: FAILED {exc}", flush=True)
            continue
        print(f"  {tree} " + "  ".join(f"{k} {v:.1f} s" for k, v in got.items())
              + f"  (load average {load:.1f} before)", flush=True)
        out.update(got)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--tree", action="append", type=Path,
                        help="popview source tree to time (repeatable; default: this one)")
    parser.add_argument("--only", action="append", choices=["info", "metrics", "demo"],
                        help="time only these (repeatable; default: all)")
    parser.add_argument("--synthetic", action="store_true",
                        help="time info and metrics on a small synthetic trace instead of EPOCH's")
    parser.add_argument("--keep-numba-cache", action="store_true",
                        help="use the environment's numba cache (checks the script runs; measures nothing)")
    parser.add_argument("--no-helper", action="store_true",
                        help="without the compile helper process (one core compiles everything)")
    add_small(parser, only=["info"], synthetic=True, keep_numba_cache=True)
    args = parser.parse_args()
    global KEEP_NUMBA_CACHE, NO_HELPER
    KEEP_NUMBA_CACHE, NO_HELPER = args.keep_numba_cache, args.no_helper
    trees = args.tree or [HERE]
    what = args.only or ["info", "metrics", "demo"]
    with tempfile.TemporaryDirectory(prefix="popview-first-trace-") as scratch:
        trace = EPOCH16
        if args.synthetic:
            sys.path.insert(0, str(HERE))
            from popview.testing.synthetic import Shape, write
            trace = Path(scratch) / "small.prv"
            write(trace, Shape(processes=2, iterations=3))
        elif not EPOCH16.exists():
            print(f"{EPOCH16} is absent: timing the demo only", file=sys.stderr)
        results: dict[Path, list[dict]] = {t: [] for t in trees}
        for _ in range(args.runs):
            for name in what:                 # the trees alternate within each measurement: paired
                for tree in trees:
                    results[tree].append(measure(tree, [name], trace))
    for tree, runs in results.items():
        keys = dict.fromkeys(k for r in runs for k in r)
        print(f"{tree}: " + "  ".join(f"{k} median {statistics.median(r[k] for r in runs if k in r):.1f} s"
                                      for k in keys))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
