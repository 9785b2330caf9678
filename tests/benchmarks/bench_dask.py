"""Benchmark: a Paraver trace converted on a Dask LocalCluster vs the single-process
path, and the measured scaling model of docs/dask.md.

usage: python tests/benchmarks/bench_dask.py [--prv TRACE] [--out DIR] [--workers 2] [--task-mb 64] [--pairs 2]

Each conversion runs in a process of its own (A B A B: Dask, then single), into a
fresh cache directory. Printed per run: wall seconds, and the peak memory of each
process (the driver, the derived-data process it starts, each Dask worker). From
the Dask runs the model's terms are measured:

- per round of tasks (parse_piece; sort_group: a table's location group; pyramid_part
  and cumulative_part: the derived data), the tasks' compute seconds in all, C, and
  the longest task, m (the scheduler's task stream); r = the text's bytes over the
  parse tasks' seconds, what one worker parses a second;
- shuffle volume V: the bytes of the pieces the parse tasks spill (the sort tasks
  read them back where they lie);
- the driver's serial part J: joining the groups' files into the cache, the call
  paths, the derived data's join and the tiles, the definitions, digests and
  rename; and S0, the header before the tasks.

and the prediction T(W) = S0 + sum over rounds of max(C / W, m) + J for W workers,
printed for W = 2 (checked against the measured run), 16 and 64.

Without --prv the trace is made with ../shared/tools/make_big_epoch.py (K=70, about
1 GB) under --out; --small makes a synthetic trace of a few MB (figures mean nothing).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from small import add_small

HERE = Path(__file__).resolve()
SHARED = HERE.parents[3] / "shared"

CHILD = r"""
import json, resource, sys, time
mode, prv, out, workers, task_bytes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
t0 = time.perf_counter()
import popview, popview.experiment
from popview.cache import cumulative, derived, groups, pyramid, writer as writer_module
figures = {"piece_bytes": 0, "finish_s": 0.0, "driver_serial_s": 0.0}
adopt, finish = writer_module.Writer.adopt, writer_module.Writer.finish
def timed_adopt(self, piece):
    figures["piece_bytes"] += piece.bytes()
    adopt(self, piece)
def timed_finish(self, progress=None):
    figures["parse_end"] = time.perf_counter()
    t = time.perf_counter(); r = finish(self, progress); figures["finish_s"] += time.perf_counter() - t
    return r
writer_module.Writer.adopt, writer_module.Writer.finish = timed_adopt, timed_finish
def serial(owner, attr):
    name = f"{getattr(owner, '__name__', owner)}.{attr}".split("cache.")[-1]
    # what the driver does alone in the finish on Dask: joining the groups' files, the call
    # paths, the derived data's join and the tiles, the definitions, digests and rename
    f = getattr(owner, attr)
    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            figures["driver_serial_s"] += time.perf_counter() - t
            parts = figures.setdefault("serial_parts", {})
            parts[name] = parts.get(name, 0.0) + time.perf_counter() - t
    setattr(owner, attr, timed)
for owner, name in ((groups._TableOut, "add"), (groups._TableOut, "close"), (groups._CallPathMerge, "add"),
                    (groups._CallPathMerge, "collector"), (derived.CallPathCollector, "write"),
                    (cumulative, "join_parts"), (pyramid, "join_parts"), (pyramid, "join_tile_parts"),
                    (writer_module.Writer, "_complete")):
    serial(owner, name)
cpu0 = resource.getrusage(resource.RUSAGE_SELF)
worker_mb = []
if mode == "dask":
    import distributed
    lc = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = distributed.Client(lc)
    client.run(lambda: __import__("popview.readers.paraver.distributed"))   # the workers' imports, as on a cluster
    client.run(lambda: __import__("popview.cache.groups"))
    class CpuPerTask(distributed.WorkerPlugin):
        # the CPU seconds of the worker process while each task executes (one thread a worker)
        def setup(self, worker):
            self.start, self.cpu = {}, {}
        def transition(self, key, start, finish, **kwargs):
            import resource as r
            u = r.getrusage(r.RUSAGE_SELF)
            if finish == "executing":
                self.start[key] = u.ru_utime + u.ru_stime
            elif start == "executing" and key in self.start:
                self.cpu[str(key)] = u.ru_utime + u.ru_stime - self.start.pop(key)
    client.register_plugin(CpuPerTask(), name="cpu")
    t_start = time.perf_counter() - t0
    worker_cpu0 = sum(client.run(lambda: sum(__import__("resource").getrusage(
        __import__("resource").RUSAGE_SELF)[:2])).values())
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t1 = time.perf_counter()
    with distributed.get_task_stream(client) as stream:
        popview.experiment.convert(prv, out, force=True, dask=client, task_bytes=task_bytes)
    wall = time.perf_counter() - t1
    kinds = {}
    cpu = {}
    for got in client.run(lambda dask_worker: dask_worker.plugins["cpu"].cpu).values():
        cpu.update(got)
    for s in stream.data:
        kind = str(s["key"]).split("-")[0].strip("('_")
        c = sum(ss["stop"] - ss["start"] for ss in s["startstops"] if ss["action"] == "compute")
        k = kinds.setdefault(kind, {"tasks": 0, "compute_s": 0.0, "max_s": 0.0, "cpu_s": 0.0, "max_cpu_s": 0.0})
        k["tasks"] += 1; k["compute_s"] += c; k["max_s"] = max(k["max_s"], c)
        k["cpu_s"] += cpu.get(str(s["key"]), 0.0); k["max_cpu_s"] = max(k["max_cpu_s"], cpu.get(str(s["key"]), 0.0))
    parse = kinds.get("parse_piece", {"tasks": 0, "compute_s": 0.0, "max_s": 0.0})
    figures.update(tasks=parse["tasks"], task_compute_s=parse["compute_s"], task_max_s=parse["max_s"], kinds=kinds)
    figures["worker_cpu_s"] = sum(client.run(lambda: sum(__import__("resource").getrusage(
        __import__("resource").RUSAGE_SELF)[:2])).values()) - worker_cpu0
    worker_mb = sorted(v / 1024 for v in client.run(
        lambda: __import__("resource").getrusage(__import__("resource").RUSAGE_SELF).ru_maxrss).values())
    side_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    client.close(); lc.close()
else:
    t_start = 0.0
    t1 = time.perf_counter()
    popview.experiment.convert(prv, out, force=True)
    wall = time.perf_counter() - t1
    side_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
cpu1 = resource.getrusage(resource.RUSAGE_SELF)
children = resource.getrusage(resource.RUSAGE_CHILDREN)
figures["driver_cpu_s"] = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
figures["children_cpu_s"] = children.ru_utime + children.ru_stime
figures.update(mode=mode, wall_s=wall, cluster_start_s=t_start, parse_s=figures.pop("parse_end", t1) - t1,
               driver_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, side_mb=side_mb,
               worker_mb=worker_mb, load=__import__("os").getloadavg()[0])
print(json.dumps(figures))
"""


def child(mode: str, prv: Path, out: Path, workers: int, task_bytes: int) -> dict:
    run = subprocess.run([sys.executable, "-c", CHILD, mode, str(prv), str(out), str(workers), str(task_bytes)],
                         capture_output=True, text=True, timeout=3600)
    if run.returncode:
        raise SystemExit(f"{mode} run failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def make_trace(out: Path, small: bool) -> Path:
    if small or not (SHARED / "tools" / "make_big_epoch.py").exists():
        from popview.testing.synthetic import Shape, write

        prv = out / "synthetic.prv"
        write(prv, Shape(processes=8, iterations=40))
        return prv
    prv = out / "big_epoch.prv"
    if not prv.exists():
        subprocess.run([sys.executable, str(SHARED / "tools" / "make_big_epoch.py"), str(SHARED / "traces"),
                        str(prv), "70"], check=True)
    return prv


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prv", type=Path)
    ap.add_argument("--out", type=Path, default=Path("/tmp/popview-bench-dask"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--task-mb", type=float, default=64)
    ap.add_argument("--pairs", type=int, default=2)
    add_small(ap, task_mb=0.25, pairs=1)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    prv = args.prv or make_trace(args.out, args.small)
    size = prv.stat().st_size
    task_bytes = int(args.task_mb * (1 << 20))
    print(f"trace: {prv} ({size / 1e6:.0f} MB); {os.cpu_count()} cores; load before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs = {"dask": [], "single": []}
    for i in range(args.pairs):
        for mode in ("dask", "single"):
            r = child(mode, prv, args.out / f"cache-{mode}-{i}", args.workers, task_bytes)
            runs[mode].append(r)
            workers = ", ".join(f"{m:.0f}" for m in r["worker_mb"])
            workers = f", workers {workers} MB" if workers else ""
            start = f" + cluster start {r['cluster_start_s']:.1f} s" if mode == "dask" else ""
            print(f"{mode:6s} run {i + 1}: wall {r['wall_s']:.2f} s ({size / 1e6 / r['wall_s']:.0f} MB/s){start}; "
                  f"peak driver {r['driver_mb']:.0f} MB, derived-data process {r['side_mb']:.0f} MB{workers}; "
                  f"load {r['load']:.2f}")
    d, s = runs["dask"], runs["single"]
    wall_d, wall_s = median([r["wall_s"] for r in d]), median([r["wall_s"] for r in s])
    print(f"median wall: Dask {args.workers} workers {wall_d:.2f} s, single process {wall_s:.2f} s "
          f"(ratio {wall_d / wall_s:.2f})")
    # the model, from the Dask runs: three rounds of tasks, then the driver's serial part
    kinds = sorted({k for r in d for k in r["kinds"]})
    rounds, cpu_rounds = {}, {}
    for k in kinds:
        tasks = median([r["kinds"].get(k, {}).get("tasks", 0) for r in d])
        compute = median([r["kinds"].get(k, {}).get("compute_s", 0.0) for r in d])
        longest = median([r["kinds"].get(k, {}).get("max_s", 0.0) for r in d])
        cpu = median([r["kinds"].get(k, {}).get("cpu_s", 0.0) for r in d])
        longest_cpu = median([r["kinds"].get(k, {}).get("max_cpu_s", 0.0) for r in d])
        rounds[k] = (compute, longest)
        cpu_rounds[k] = (cpu, longest_cpu)
        print(f"tasks {k}: {tasks} tasks, {compute:.2f} s of compute in all (longest {longest:.2f} s); "
              f"CPU {cpu:.2f} s in all (longest {longest_cpu:.2f} s)")
    r_task = median([size / r["task_compute_s"] for r in d if r["task_compute_s"]])        # bytes/s a worker
    volume = median([r["piece_bytes"] for r in d])
    finish = median([r["finish_s"] for r in d])
    serial_s = median([r["driver_serial_s"] for r in d])
    parse = median([r["parse_s"] for r in d])
    setup = max(0.0, wall_d - parse - finish)
    print(f"model terms: per-task parse throughput r = {r_task / 1e6:.1f} MB/s a worker "
          f"({median([r['tasks'] for r in d])} tasks of {args.task_mb:g} MB); shuffle volume V = {volume / 1e6:.0f} MB "
          f"({volume / size:.2f} of the text: written by the parse tasks, read by the sort tasks); "
          f"driver: before the tasks {setup:.2f} s, serial part of the finish J = {serial_s:.2f} s "
          f"(finish {finish:.2f} s in all); measured parse phase {parse:.2f} s")
    for w in (args.workers, 16, 64):
        t = setup + sum(max(compute / w, longest) for compute, longest in rounds.values()) + serial_s
        print(f"predicted T({w}) = {t:.1f} s ({size / 1e6 / t:.0f} MB/s)"
              + (f"; measured {wall_d:.1f} s" if w == args.workers else ""))
    # the same from CPU seconds (what an unloaded worker would take): the shared machine's load
    # stretches the tasks' wall seconds, not their CPU
    driver_cpu = median([r["driver_cpu_s"] for r in d])
    print(f"CPU: workers {median([r['worker_cpu_s'] for r in d]):.1f} s, driver {driver_cpu:.1f} s; single process "
          f"{median([r['driver_cpu_s'] + r['children_cpu_s'] for r in s]):.1f} s (with its derived-data process)")
    for w in (args.workers, 16, 64):
        t = sum(max(cpu / w, longest) for cpu, longest in cpu_rounds.values()) + driver_cpu
        print(f"predicted from CPU seconds, T_cpu({w}) = {t:.1f} s ({size / 1e6 / t:.0f} MB/s)")
    print(f"single process: finish {median([r['finish_s'] for r in s]):.2f} s, parse {median([r['parse_s'] for r in s]):.2f} s")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
