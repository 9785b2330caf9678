"""Conversion side by side with BSC's paramedir computing one histogram.

`popview convert --force` (parse, sort, derived data, checksums: the whole
cache that the metrics, reports and cfgs read), `popview convert --force
--timeline` (the same with the timeline overview, which a default conversion
leaves to the timeline's first use: popview.cache.overview) and that first
use alone (a fresh process opening the cache and building the overview from
it) against `paramedir TRACE CFG OUT` (the Paraver kernel loading the trace
and computing the cfg's histogram: basicanalysis' timings.cfg, the time per
state and thread, by default), run in turn A B C D A B C D ... on the same
.prv, each a fresh process. Prints per size the median wall, the MB/s of
.prv text, the CPU seconds (and their user and system parts, with the minor
page faults: fresh memory the kernel clears, the part of a run that varies
most on a shared virtual machine), the joint peak resident memory of each process
tree (popview's derived-data process included, sampled every 20 ms) and the
ratio paramedir / popview pair by pair. popview runs with Python's bytecode cache, as an
installed package does (PYTHONDONTWRITEBYTECODE is unset for it: ahead.installed_env).

    python tests/benchmarks/bench_vs_paramedir.py [--repeat 10,72] [--runs 3] [--out DIR]
    python tests/benchmarks/bench_vs_paramedir.py --small      # seconds: what CI runs
    python tests/benchmarks/bench_vs_paramedir.py --cores      # also popview on 1 and on 2 cores

`--cores` also converts each trace pinned to one core and to two (taskset,
in turn), and prints the speed-up and the serial part it implies (Amdahl:
speed-up S on 2 cores leaves a serial fraction 2 / S - 1 of the one-core time).

paramedir is not part of popview: build it from paraver-kernel's public
source and name it with POPVIEW_PARAMEDIR=/path/to/paramedir (its cfg with
POPVIEW_PARAMEDIR_CFG). Without it the comparison is skipped with the reason
and popview's figures alone are printed. The traces are the EPOCH 16-rank
Extrae trace repeated K times in time (../shared/tools/make_big_epoch.py:
K=10 is 143 MB, K=72 1.04 GB), written under --out; without ../shared
(or with --small) a synthetic trace of the same shape is used.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
SHARED = HERE.parents[3] / "shared"
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
from ahead import installed_env, ready  # noqa: E402
DEFAULT_CFG = SHARED / "traces" / "paraver-cfgs" / "basicanalysis" / "cfgs" / "timings.cfg"


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_rss(root: int) -> int:
    """Resident bytes of a process and all its descendants now (Linux /proc)."""
    kids, todo, total = _children(), [root], 0
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
    return total


def timed(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> dict:
    """Wall, CPU (the process's and its waited-for children's) and joint peak RSS of one run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    peak, sampling = 0, os.path.isdir("/proc")
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if sampling:
            peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {proc.returncode}: {err.strip()[-500:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": peak / 1e6,
            "user": usage.ru_utime, "sys": usage.ru_stime, "faults": usage.ru_minflt}


# A first use of the timeline of a cache converted without its overview: built from the cache.
FIRST_USE = ("import sys, popview; from popview.cache import overview\n"
             "with popview.open(sys.argv[1], cache_dir=sys.argv[2]) as exp:\n"
             "    overview.remove(exp.cache_path)\n"
             "    exp.prepare_timeline()\n")


def make_trace(out: Path, k: int) -> Path:
    prv = out / f"epoch_x{k}.prv"
    tool = SHARED / "tools" / "make_big_epoch.py"
    if not prv.exists():
        subprocess.run([sys.executable, str(tool), str(SHARED / "traces"), str(prv), str(k)], check=True)
    return prv


def small_trace(out: Path) -> Path:
    """A few MB, EPOCH-like (MPI, counters), from the project's synthetic generator."""
    sys.path.insert(0, str(REPO))
    from popview.testing.synthetic import Shape, write

    prv = out / "small.prv"
    if not prv.exists():
        write(prv, Shape(processes=16, threads=1, iterations=60, work_ns=400_000))
    return prv


def paramedir() -> tuple[str | None, str]:
    """The paramedir to compare with, or None and why not."""
    exe = os.environ.get("POPVIEW_PARAMEDIR") or shutil.which("paramedir")
    if not exe:
        return None, ("paramedir not found: build it from paraver-kernel's public source and set "
                      "POPVIEW_PARAMEDIR=/path/to/paramedir")
    if not os.access(exe, os.X_OK):
        return None, f"POPVIEW_PARAMEDIR={exe} is not an executable"
    return exe, ""


def compare(prv: Path, out: Path, runs: int, exe: str | None, cfg: Path, warm_up: bool = True) -> None:
    size = prv.stat().st_size
    cache = out / "cache"
    env = installed_env(PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    home = out / "paramedir-home"          # paramedir keeps its preferences in $HOME/.paraver
    home.mkdir(exist_ok=True)
    pm_env = dict(os.environ, HOME=str(home))
    pop_cmd = [sys.executable, "-m", "popview", "convert", "--force", "--cache-dir", str(cache), str(prv)]
    timeline_cmd = pop_cmd + ["--timeline"]
    first_use_cmd = [sys.executable, "-c", FIRST_USE, str(prv), str(cache)]
    pm_cmd = [exe, str(prv), str(cfg), str(out / "histogram.txt")] if exe else None
    if warm_up:                                        # page cache, numba's cached kernels
        print(f"  kernels compiled ahead of time: {ready(REPO)}")
        timed(timeline_cmd, env)
        if pm_cmd:
            timed(pm_cmd, pm_env, out)
    pop, with_timeline, first_use, pm = [], [], [], []
    for _ in range(runs):
        pop.append(timed(pop_cmd, env))
        with_timeline.append(timed(timeline_cmd, env))
        first_use.append(timed(first_use_cmd, env))
        if pm_cmd:
            pm.append(timed(pm_cmd, pm_env, out))
    print(f"\n{prv.name}: {size / 1e6:.1f} MB of .prv text, {runs} interleaved runs each "
          f"(load {os.getloadavg()[0]:.1f} at the end)")
    for name, rs in [("popview convert", pop), ("popview convert --timeline", with_timeline)] \
            + ([("paramedir, one histogram", pm)] if pm else []):
        print(figures(name, rs, size / 1e6))
    print(figures("timeline's first use", first_use) + " (open the cache, build its overview)")
    if pm:
        print(ratio_line(pm, pop, "paramedir / popview") + "; target >= 3")
        print(ratio_line(pm, with_timeline, "paramedir / popview --timeline"))


def cores(prv: Path, out: Path, runs: int) -> None:
    """The same conversion pinned to one core and to two, in turn: speed-up and serial part."""
    taskset = shutil.which("taskset")
    available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not taskset or len(available) < 2:
        print(f"  SKIPPED 1 vs 2 cores: {'no taskset' if not taskset else 'fewer than 2 cores available'}")
        return
    env = installed_env(PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    convert = [sys.executable, "-m", "popview", "convert", "--force", "--cache-dir", str(out / "cache"), str(prv)]
    pins = {1: str(available[0]), 2: f"{available[0]},{available[1]}"}
    results: dict[int, list[dict]] = {1: [], 2: []}
    for _ in range(runs):
        for n, cpus in pins.items():
            results[n].append(timed([taskset, "-c", cpus, *convert], env))
    size = prv.stat().st_size / 1e6
    for n in pins:
        print(figures(f"popview on {n} core{'s' if n > 1 else ''}", results[n], size))
    ups = sorted(a["wall"] / b["wall"] for a, b in zip(results[1], results[2]))
    up = statistics.median(ups)
    print(f"  speed-up 1 -> 2 cores, pair by pair: median {up:.2f} (min {ups[0]:.2f}, max {ups[-1]:.2f}); "
          f"serial part (Amdahl) {min(1.0, max(0.0, 2 / up - 1)):.0%} of the one-core time")


def figures(label: str, runs: list[dict], megabytes: float | None = None) -> str:
    """One line: median wall (min, max), MB/s of `megabytes` when given, median CPU, peak RSS."""
    wall = statistics.median(r["wall"] for r in runs)
    rate = f" = {megabytes / wall:5.0f} MB/s" if megabytes else ""
    return (f"  {label:28s} wall {wall:6.2f} s (min {min(r['wall'] for r in runs):.2f}, "
            f"max {max(r['wall'] for r in runs):.2f}){rate}, CPU {statistics.median(r['cpu'] for r in runs):6.2f} s, "
            f"peak RSS {max(r['peak_mb'] for r in runs):5.0f} MB"
            f" (user {statistics.median(r['user'] for r in runs):.2f} s, system {statistics.median(r['sys'] for r in runs):.2f} s, "
            f"{statistics.median(r['faults'] for r in runs) / 1e3:.0f} k page faults)")


def ratio_line(num: list[dict], den: list[dict], label: str) -> str:
    """The walls' ratio num / den, pair by pair (runs in turn): median, min, max."""
    ratios = sorted(a["wall"] / b["wall"] for a, b in zip(num, den))
    return (f"  {label} wall, pair by pair: median {statistics.median(ratios):.2f} "
            f"(min {ratios[0]:.2f}, max {ratios[-1]:.2f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", default="10,72", help="make_big_epoch.py repeat counts, comma-separated")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "popview-bench-vs-paramedir")
    ap.add_argument("--small", action="store_true", help="one small synthetic trace, one run (CI)")
    ap.add_argument("--cores", action="store_true", help="also popview pinned to 1 and to 2 cores (taskset)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    exe, why = paramedir()
    cfg = Path(os.environ.get("POPVIEW_PARAMEDIR_CFG") or DEFAULT_CFG)
    if exe and not cfg.exists():
        exe, why = None, f"no cfg for paramedir at {cfg} (set POPVIEW_PARAMEDIR_CFG)"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"paramedir: {exe} with {cfg.name}" if exe else f"SKIPPED the comparison: {why}")
    if args.small or not (SHARED / "tools" / "make_big_epoch.py").exists():
        traces = [small_trace(args.out)]
        args.runs = 1 if args.small else args.runs
    else:
        traces = [make_trace(args.out, int(k)) for k in args.repeat.split(",")]
    for prv in traces:
        compare(prv, args.out, args.runs, exe, cfg, warm_up=not args.small)
        if args.cores:
            cores(prv, args.out, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
