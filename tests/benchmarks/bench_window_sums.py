"""What the window sums on demand (popview.cache.window_sums) cost and save, each step a
fresh process, its wall and CPU (its threads and children included: os.wait4):

- `popview convert --force` (the cache without the window sums),
- `popview metrics` (the whole run, its replay included: needs no window sums),
- the first `popview metrics --focus window:T0:T1` (the middle third of the run: builds
  the window sums from the cache, then the metrics),
- the same again (the window sums open).

With several source trees (`--tree A --tree B`) the runs go in turn A B A B ..., each its
own PYTHONPATH and cache folder, and the medians are printed per tree (the before and
after of docs/cache.md's window sums section; a tree before them has its rows in the cache).

    python tests/benchmarks/bench_window_sums.py TRACE [--tree DIR ...] [--runs 3] [--out DIR]
    python tests/benchmarks/bench_window_sums.py --small      # seconds: what CI runs
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
from pathlib import Path

from small import add_small, in_scratch

REPO = Path(__file__).resolve().parents[2]
STEPS = ("convert --force", "metrics (whole run)", "first window focus", "second window focus")


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err.strip()[-800:]}")
    return wall, usage.ru_utime + usage.ru_stime


def duration_s(trace: Path, env: dict, cache: Path) -> float:
    out = subprocess.run([sys.executable, "-m", "popview", "info", "--json", "--cache-dir", str(cache), str(trace)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["duration_ns"] / 1e9


def run(trace: Path, trees: list[Path], runs: int, out: Path) -> None:
    envs = [dict(os.environ, POPVIEW_PRECOMPILE="0", PYTHONPATH=str(tree)) for tree in trees]
    caches = [out / f"cache-{i}" for i in range(len(trees))]
    pop = [sys.executable, "-m", "popview"]
    for env, cache in zip(envs, caches):               # warm-up: page cache, numba's cached kernels
        timed(pop + ["convert", "--force", "--cache-dir", str(cache), str(trace)], env)
    t = duration_s(trace, envs[0], caches[0])
    focus = f"window:{t / 3:.6f}:{2 * t / 3:.6f}"
    for env, cache in zip(envs, caches):
        timed(pop + ["metrics", "--focus", focus, "--cache-dir", str(cache), str(trace)], env)
    figures = [{step: [] for step in STEPS} for _ in trees]
    for _ in range(runs):
        for env, cache, fig in zip(envs, caches, figures):
            steps = [["convert", "--force"], ["metrics"], ["metrics", "--focus", focus], ["metrics", "--focus", focus]]
            for step, args in zip(STEPS, steps):
                fig[step].append(timed(pop + args + ["--cache-dir", str(cache), str(trace)], env))
    print(f"{trace} ({trace.stat().st_size / 1e6:.1f} MB), window focus {focus}, {runs} runs a tree, "
          f"load {os.getloadavg()[0]:.2f}")
    for tree, fig in zip(trees, figures):
        print(f"tree {tree}")
        for step in STEPS:
            wall = statistics.median(w for w, _ in fig[step])
            cpu = statistics.median(c for _, c in fig[step])
            print(f"  {step:22s} wall {wall:7.2f} s   cpu {cpu:7.2f} s")
        sums = sorted(caches[trees.index(tree)].glob("*.sums.h5"))
        size = sum(p.stat().st_size for p in caches[trees.index(tree)].glob("*.h5"))
        print(f"  cache files {size / 1e6:.1f} MB" + (f", window sums {sums[0].stat().st_size / 1e6:.1f} MB"
                                                    if sums else ", no window sums (the rows in the cache)"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", type=Path, nargs="?")
    ap.add_argument("--tree", type=Path, action="append", help="a source tree (default: this one); give several")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, help="where the caches go (default: a temporary folder)")
    add_small(ap, runs=1)
    args = ap.parse_args()
    trees = args.tree or [REPO]

    def go(folder: Path, trace: Path) -> None:
        run(trace, trees, args.runs, args.out or folder)

    if args.trace is not None:
        with tempfile.TemporaryDirectory(prefix="popview-bench-") as tmp:
            go(Path(tmp), args.trace)
        return 0

    def small(folder: Path) -> None:
        sys.path.insert(0, str(REPO))
        from popview.testing.synthetic import Shape, write

        trace = folder / "small.prv"
        write(trace, Shape(processes=4, threads=2, iterations=6, work_ns=400_000))
        go(folder, trace)
    in_scratch(ap, args.small, "a TRACE", small)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
