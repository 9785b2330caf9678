"""`popview convert TRACE...`: convert into the cache (once)."""
from __future__ import annotations

import time

from popview.commands.common import ProgressBar, add_cache_dir, add_dask, add_paths, dask_client, expand_runs, guarded
from popview.experiment import convert
from popview import readers


def add_parser(sub) -> None:
    p = sub.add_parser("convert", help="convert traces/profiles into the popview cache")
    add_paths(p)
    p.add_argument("--force", action="store_true", help="convert even if a valid cache exists")
    p.add_argument("--timeline", action="store_true",
                   help="also build the timeline overview now (otherwise the window builds it when it first "
                        "opens the trace): for traces converted here and opened later")
    p.add_argument("--all", action="store_true",
                   help="build every derived part now: the timeline overview and the window sums (the rows "
                        "that time-window and iteration foci read; otherwise built at their first use)")
    add_cache_dir(p)
    add_dask(p, "convert")


@guarded
def run(args) -> int:
    paths = expand_runs(args.paths)
    from popview.cache import heap

    reuses = any(readers.reuses_memory(p) for p in paths)
    if not (args.dask or reuses):
        # this process only converts, then exits: glibc keeps freed arrays for the next ones instead
        # of mapping each afresh and faulting it in page by page, and serves every thread from its one
        # heap (popview.cache.heap). 1 GB trace: page faults 281 -> 86 k, system time 3.0 -> 2.3 s,
        # peak 595 -> 551 MB. A default conversion's peaks all come in this process: no step trims.
        # Beside the derived-data process of --timeline (--all) the steps still trim, for the two
        # processes' joint peak: 1 GB trace 774-776 MB against 790 MB at most, faults 224-265 k ->
        # 179-191 k, CPU -5 % (2 pairs against the one heap alone, load 5.5)
        heap.keep_freed_memory(trim=bool(args.timeline or args.all))
    elif not args.dask:
        # formats whose decoding threads reuse their own memory (Format.reuses_memory: OTF2, whose rows
        # stay in memory, cache/kept.py): kept freed arrays raised the 10^7-event archive's peak to 1089
        # against 815 MiB (CPU 1.07x, 5 pairs); the one heap alone (heap.one_heap) lowered it from
        # 842-933 to 795-809 MB, CPU the same (3 pairs, load 5-6)
        heap.one_heap()
    with dask_client(args) as client:
        for path in paths:
            t0 = time.perf_counter()
            timeline = args.timeline or args.all
            target, converted = convert(path, args.cache_dir, ProgressBar(str(path)), force=args.force, dask=client,
                                        timeline=timeline, window_sums=args.all)
            what = "converted" if converted else "cache up to date"
            if args.all:
                what += ", with its timeline overview and window sums"
            elif timeline:
                what += ", with its timeline overview"
            print(f"{path}: {what} -> {target} ({time.perf_counter() - t0:.2f} s"
                  f"{', on Dask' if client is not None and converted else ''})")
            for warning in _warnings(target):      # as `info` lists them: a truncated file, no .pcf...
                print(f"  warning: {warning}")
    return 0


def _warnings(target) -> list[str]:
    """The reader's warnings, from the summary stored in the cache (no HDF5 opened)."""
    from popview.cache import summary

    found = summary.read(target)
    return list(found["info"].get("warnings") or []) if found else []
