"""Benchmark: how soon a conversion stops after the user presses Cancel.

A conversion runs in a thread of this process, as in the window; Cancel is
pressed at evenly spaced moments of it (a first, uncancelled conversion
measures its length). The latency is the time from the press to the moment
popview.convert raises Cancelled; nothing may be left in the cache folder.

usage: python tests/benchmarks/bench_cancel.py [TRACE] [--points N] [--out DIR] [--synthetic-iterations N]

Without TRACE it converts a synthetic hybrid trace (popview.testing.synthetic) of
N iterations (the size CI runs is small; the figures come from a 1 GB trace, e.g.
the one bench_convert.py writes).
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import threading
import time
from pathlib import Path

from small import add_small

from popview.experiment import convert
from popview.cache import Cancelled


def convert_once(trace: Path, cache_dir: Path, press_at: float | None) -> tuple[float, float | None]:
    """(seconds the conversion ran, latency of the cancel or None when it finished)."""
    cancel = threading.Event()
    pressed: list[float] = []

    def press() -> None:
        pressed.append(time.perf_counter())
        cancel.set()

    timer = threading.Timer(press_at, press) if press_at is not None else None
    t0 = time.perf_counter()
    if timer:
        timer.start()
    try:
        convert(trace, cache_dir=cache_dir, cancel=cancel, force=True)
        latency = None
    except Cancelled:
        latency = time.perf_counter() - pressed[0]
    finally:
        if timer:
            timer.cancel()
    return time.perf_counter() - t0, latency


def synthetic_trace(out: Path, iterations: int) -> Path:
    from popview.testing.synthetic import Shape, write

    prv = out / f"synthetic_{iterations}.prv"
    write(prv, Shape(processes=8, threads=2, iterations=iterations))
    return prv


def leftovers(cache_dir: Path) -> list[str]:
    return sorted(p.name for p in cache_dir.iterdir()) if cache_dir.exists() else []


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace", type=Path, nargs="?")
    ap.add_argument("--synthetic-iterations", type=int, default=2000)
    ap.add_argument("--points", type=int, default=10, help="cancel presses spread over the conversion")
    ap.add_argument("--out", type=Path, default=Path("/tmp/popview-bench-cancel"))
    add_small(ap, synthetic_iterations=300, points=2)
    args = ap.parse_args()
    cache_dir = args.out / "cache"
    args.out.mkdir(parents=True, exist_ok=True)
    args.trace = args.trace or synthetic_trace(args.out, args.synthetic_iterations)
    shutil.rmtree(cache_dir, ignore_errors=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}")
    print(f"input: {args.trace}")
    length, _ = convert_once(args.trace, cache_dir, None)
    print(f"uncancelled conversion: {length:.2f} s")
    latencies = []
    for i in range(1, args.points + 1):
        shutil.rmtree(cache_dir, ignore_errors=True)
        at = length * i / (args.points + 1)
        ran, latency = convert_once(args.trace, cache_dir, at)
        left = leftovers(cache_dir)
        state = "finished first" if latency is None else f"stopped {latency:.3f} s after the press"
        print(f"  cancel at {at:6.2f} s: {state}; left in the cache folder: {left or 'nothing'}")
        if latency is not None:
            latencies.append(latency)
    if latencies:
        print(f"cancel latency: max {max(latencies):.3f} s, median {sorted(latencies)[len(latencies) // 2]:.3f} s "
              f"over {len(latencies)} presses")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
