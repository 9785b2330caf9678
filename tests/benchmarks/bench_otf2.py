"""OTF2 conversion speed: writes (once) a synthetic archive of >= 10^7 events
with the `otf2` bindings, converts it into the cache in a fresh process and
prints events/s and that process's peak memory.

    python tests/benchmarks/bench_otf2.py [--events 10000000] [--dir /tmp/popview-bench-otf2]
                                           [--bindings-only] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from small import add_small

EVENTS_PER_ITERATION_AND_RANK = 10.8   # compute (4 with counters), send (3), recv (3), 1/5 collective (4)


def generate(folder: Path, events: int, ranks: int) -> int:
    from popview.testing.otf2_writer import write_trace

    marker = folder / "written.json"
    if marker.exists():
        return json.loads(marker.read_text())["events"]
    shutil.rmtree(folder, ignore_errors=True)
    iterations = int(events / (ranks * EVENTS_PER_ITERATION_AND_RANK)) + 1
    t0 = time.perf_counter()
    written = write_trace(folder, ranks=ranks, iterations=iterations)
    print(f"wrote {written.total_events:,} events in {time.perf_counter() - t0:.1f} s to {folder}")
    marker.write_text(json.dumps({"events": written.total_events}))
    return written.total_events


def convert_in_this_process(folder: Path, cache: Path, bindings_only: bool) -> None:
    """The steps of popview.open, timed apart: reading the OTF2 archive into the
    cache writer (this reader) and finishing the cache (sorting, derived data)."""
    from popview.cache import Progress, Writer
    from popview.cache.fingerprint import fingerprint
    from popview.readers.otf2 import source_files
    from popview.readers import otf2
    from popview.readers.otf2 import events

    events.USE_DECODER = not bindings_only
    anchor = otf2.anchor(folder)
    cache.mkdir(parents=True, exist_ok=True)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    with Writer(cache / "bench.h5", fingerprint(source_files(anchor))) as writer:
        defs = otf2.convert(anchor, writer, Progress())
        wall1, cpu1 = time.perf_counter(), time.process_time()
        writer.finish(Progress())
    wall2, cpu2 = time.perf_counter(), time.process_time()
    n = sum(defs.flags["otf2_event_counts"].values())
    children = resource.getrusage(resource.RUSAGE_CHILDREN)    # the derived-data process
    peak_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + children.ru_maxrss) / 1024
    cpu2 += children.ru_utime + children.ru_stime
    print(json.dumps({"events": n, "read_s": round(wall1 - wall0, 2), "read_cpu_s": round(cpu1 - cpu0, 2),
                      "finish_s": round(wall2 - wall1, 2), "finish_cpu_s": round(cpu2 - cpu1, 2),
                      "peak_rss_mb": round(peak_mb), "load_average": round(os.getloadavg()[0], 1),
                      "locations_via_bindings": defs.flags.get("otf2_locations_via_bindings", 0)}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "popview-bench-otf2")
    ap.add_argument("--bindings-only", action="store_true", help="measure the reference path (slow)")
    ap.add_argument("--keep", action="store_true", help="keep the archive for the next run")
    ap.add_argument("--convert-only", action="store_true", help=argparse.SUPPRESS)
    add_small(ap, events=20_000, ranks=2)
    args = ap.parse_args()
    cache = args.dir.parent / (args.dir.name + "-cache")
    if args.convert_only:
        convert_in_this_process(args.dir, cache, args.bindings_only)
        return 0
    total = generate(args.dir, args.events, args.ranks)
    cmd = [sys.executable, __file__, "--convert-only", "--dir", str(args.dir)]
    cmd += ["--bindings-only"] if args.bindings_only else []
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stderr, file=sys.stderr)
        return result.returncode
    f = json.loads(result.stdout.strip().splitlines()[-1])
    path = "bindings" if args.bindings_only else "decoder"
    print(f"OTF2 archive of {total:,} events, {path} path, load average {f['load_average']} on {os.cpu_count()} cores")
    print(f"  reading into the cache writer: {f['read_s']} s wall ({total / f['read_s']:,.0f} events/s), "
          f"{f['read_cpu_s']} s CPU ({total / max(f['read_cpu_s'], 1e-9):,.0f} events per CPU second)")
    print(f"  finishing the cache (sort, call paths, pyramids...): {f['finish_s']} s wall, {f['finish_cpu_s']} s CPU")
    total_s = f["read_s"] + f["finish_s"]
    print(f"  end to end: {total_s:.1f} s ({total / total_s:,.0f} events/s); peak memory {f['peak_rss_mb']} MB; "
          f"{f['locations_via_bindings']} location(s) read with the bindings")
    shutil.rmtree(cache, ignore_errors=True)
    if not args.keep:
        shutil.rmtree(args.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
