"""`popview convert TRACE...`: convert into the cache (once)."""
from __future__ import annotations

import time

from popview.commands.common import ProgressBar, add_cache_dir, add_paths, expand_runs, guarded
from popview.experiment import convert


def add_parser(sub) -> None:
    p = sub.add_parser("convert", help="convert traces/profiles into the popview cache")
    add_paths(p)
    p.add_argument("--force", action="store_true", help="convert even if a valid cache exists")
    add_cache_dir(p)


@guarded
def run(args) -> int:
    for path in expand_runs(args.paths):
        t0 = time.perf_counter()
        target, converted = convert(path, args.cache_dir, ProgressBar(str(path)), force=args.force)
        what = "converted" if converted else "cache up to date"
        print(f"{path}: {what} -> {target} ({time.perf_counter() - t0:.2f} s)")
    return 0
