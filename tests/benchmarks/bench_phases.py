"""Where a Paraver conversion's time goes, phase by phase, and which threads work.

Each run converts the trace (`--force`) in a fresh process and records, at
every change of the progress message's phase (parsing, sorting states,
sorting events, ..., cumulative sums, done): the wall time, the process's CPU
time, the CPU of each family of threads since the last phase (from
/proc/self/task, sampled every 10 ms: the parse, spill, read, consume, zstd,
fingerprint threads are named `popview-*`) the peak resident memory
within the phase and the minor page faults (fresh memory touched: the
process's and, after each thread's CPU, its family's, in thousands). The
child sets glibc's allocator as `popview convert` does (heap.keep_freed_memory(trim=False);
PHASES_CLI_HEAP=0: glibc's defaults, as a library's caller has them). With several source trees (`--tree A --tree B`), the runs
go in turn A B A B ... (each its own PYTHONPATH), and the medians per phase
are printed per tree: the before and after of docs/cache.md's issue 25
sections. The wall figures hold only on a machine with both cores free; the
CPU figures hold at any load.

    python tests/benchmarks/bench_phases.py --prv TRACE [--tree DIR ...] [--runs 3]
    python tests/benchmarks/bench_phases.py --small      # seconds: what CI runs

Linux only (/proc).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ahead import installed_env, ready
from small import add_small

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]

CHILD = r"""
import json, os, sys, threading, time
t0, c0 = time.perf_counter(), time.process_time()
tick = os.sysconf("SC_CLK_TCK")
lock = threading.Lock()
seen, peak = {}, [0]


def family(name):
    if name.startswith("popview-"):
        return name.rsplit("_", 1)[0]
    return {"MainThread": "main", "sampler": "sampler"}.get(name, "other")


def sample():
    names = {t.native_id: t.name for t in threading.enumerate()}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        with lock:
            entry = seen.setdefault(tid, [None, 0.0, 0])
            if entry[0] is None and int(tid) in names:
                entry[0] = family(names[int(tid)])
            entry[1] = (int(fields[11]) + int(fields[12])) / tick
            entry[2] = int(fields[7])          # minor page faults
    with open("/proc/self/statm") as f:
        peak[0] = max(peak[0], int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"))


def loop():
    while True:
        sample()
        time.sleep(0.01)


threading.Thread(target=loop, daemon=True, name="sampler").start()
try:
    from popview.cli import _one_blas_thread       # as `popview convert` starts (numpy's BLAS threads)
    _one_blas_thread()
except ImportError:                                 # a tree from before it
    pass
if os.environ.get("PHASES_CLI_HEAP", "1") == "1":
    try:                                            # as `popview convert` sets glibc for itself (heap.py)
        from popview.cache import heap
        try:
            heap.keep_freed_memory(trim=False)
        except TypeError:                           # a tree from before trim=
            heap.keep_freed_memory()
    except (ImportError, AttributeError):
        pass
from popview.experiment import convert

phases, last, before = [], [None], {}


def close(label):
    sample()
    threads, faults = {}, {}
    with lock:
        for tid, (name, cpu, flt) in seen.items():
            if name != "sampler":
                threads[name or "other"] = threads.get(name or "other", 0.0) + cpu - before.get(tid, (0.0, 0))[0]
                faults[name or "other"] = faults.get(name or "other", 0) + flt - before.get(tid, (0.0, 0))[1]
            before[tid] = (cpu, flt)
        rss, peak[0] = peak[0], 0
    phases.append({"phase": label, "end": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                   "threads": {k: round(v, 3) for k, v in threads.items() if v > 0}, "peak_mb": rss / 2**20,
                   "faults": {k: v for k, v in faults.items() if v > 0}})


def progress(fraction, message=""):
    phase = message.split(":")[0].split(" tiles")[0]
    if phase.startswith(("preparing popview", "sorted ", "wrote ")) or phase == last[0]:
        return
    close(last[0] or "start")
    last[0] = phase


convert(sys.argv[1], sys.argv[2], progress, force=True)
close(last[0])
print(json.dumps(phases))
"""


def run(prv: Path, tree: Path, cache: Path) -> list[dict]:
    env = installed_env(PYTHONPATH=str(tree), POPVIEW_PRECOMPILE="0")     # bytecode cached, as installed
    out = subprocess.run([sys.executable, "-c", CHILD, str(prv), str(cache)], env=env, capture_output=True,
                         text=True, check=True, cwd=tree)      # `-c` puts the working folder first on the path
    return json.loads(out.stdout.strip().splitlines()[-1])


def durations(phases: list[dict]) -> dict[str, dict]:
    """Per phase: its wall, its CPU, its threads' CPU and its peak (a phase met twice adds up)."""
    found, start, cpu = {}, 0.0, 0.0
    for p in phases:
        entry = found.setdefault(p["phase"], {"wall": 0.0, "cpu": 0.0, "threads": {}, "peak_mb": 0.0, "faults": 0})
        entry["wall"] += p["end"] - start
        entry["cpu"] += p["cpu"] - cpu
        for k, v in p["threads"].items():
            entry["threads"][k] = entry["threads"].get(k, 0.0) + v
        entry["faults"] += sum(p.get("faults", {}).values())
        for k, v in p.get("faults", {}).items():
            entry.setdefault("thread_faults", {})[k] = entry.get("thread_faults", {}).get(k, 0) + v
        entry["peak_mb"] = max(entry["peak_mb"], p["peak_mb"])
        start, cpu = p["end"], p["cpu"]
    found["total"] = {"wall": start, "cpu": cpu, "threads": {}, "faults": sum(p["faults"] for p in found.values()),
                      "peak_mb": max(p["peak_mb"] for p in phases)}
    return found


def _faults_of(rows: list[dict], name: str) -> str:
    """A family of threads' page faults in a phase (median, thousands), when it has any."""
    k = statistics.median(x.get("thread_faults", {}).get(name, 0) for x in rows) / 1e3
    return f"/{k:.0f}k" if k >= 0.5 else ""


def table(label: str, runs: list[dict[str, dict]]) -> str:
    order = list(dict.fromkeys(k for r in runs for k in r))
    lines = [f"{label} ({len(runs)} runs, medians)",
             f"  {'phase':<24} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'faults k':>8}  threads' CPU s"]
    for phase in order:
        rows = [r[phase] for r in runs if phase in r]
        med = {k: statistics.median(x.get(k, 0) for x in rows) for k in ("wall", "cpu", "peak_mb", "faults")}
        names = sorted({n for x in rows for n in x["threads"]})
        threads = " ".join(f"{n.replace('popview-', '')}={statistics.median(x['threads'].get(n, 0.0) for x in rows):.2f}"
                           + _faults_of(rows, n) for n in names)
        lines.append(f"  {phase[:24]:<24} {med['wall']:7.2f} {med['cpu']:7.2f} {med['peak_mb']:8.0f} {med['faults'] / 1e3:8.1f}  {threads}")
    return "\n".join(lines)


def small_trace(out: Path) -> Path:
    sys.path.insert(0, str(REPO))
    from popview.testing.synthetic import Shape, write

    prv = out / "small.prv"
    write(prv, Shape(processes=4, threads=1, iterations=20, work_ns=400_000))
    return prv


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prv", type=Path, help="the Paraver trace to convert")
    ap.add_argument("--tree", type=Path, action="append", help="a source tree to run (repeat: in turn); "
                                                                 "default: this one")
    ap.add_argument("--runs", type=int, default=3, help="runs of each tree (after one warm-up run each)")
    add_small(ap, runs=1)
    args = ap.parse_args()
    if not os.path.isdir("/proc/self/task"):
        print("SKIPPED: needs Linux's /proc")
        return 0
    trees = [t.resolve() for t in (args.tree or [REPO])]
    with tempfile.TemporaryDirectory(prefix="popview-phases-") as tmp:
        tmp = Path(tmp)
        prv = args.prv or (small_trace(tmp) if args.small else ap.error("give --prv TRACE (or --small)"))
        results: dict[Path, list] = {t: [] for t in trees}
        ahead = {t: ready(t, build=not args.small) for t in trees}
        for t in trees if not args.small else []:
            run(prv, t, tmp / f"warm-{trees.index(t)}")
        for _ in range(args.runs):
            for i, t in enumerate(trees):
                results[t].append(durations(run(prv, t, tmp / f"cache-{i}")))
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
        print(f"{prv.name}: {prv.stat().st_size / 1e6:.0f} MB; load average after the runs {load}")
        for t in trees:
            print(f"{t}: kernels compiled ahead of time: {ahead[t]}")
            print(table(str(t), results[t]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
