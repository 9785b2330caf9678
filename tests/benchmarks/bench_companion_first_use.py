"""A companion's first use: remove the companion (timeline overview or window sums) of a
converted cache, open the cache and build it (popview.cache.companion: in memory when
small, in a child process when large), and print how long that took. As one fresh
process, it is what farm-bench times against another tree (docs/cache.md):

    farm-bench --vs 'env PYTHONPATH=OLD python tests/benchmarks/bench_companion_first_use.py CACHE timeline' \\
        -- env PYTHONPATH=NEW python tests/benchmarks/bench_companion_first_use.py CACHE timeline

    python tests/benchmarks/bench_companion_first_use.py CACHE {timeline,sums} [--child]
    python tests/benchmarks/bench_companion_first_use.py --small     # seconds: what CI runs

`--child` builds it in the child process whatever its size (what a large cache does).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from small import add_small, in_scratch


def first_use(cache: Path, which: str, child: bool) -> float:
    from popview.cache import Reader, companion, overview, window_sums

    companion.IN_MEMORY_BYTES = 0 if child else IN_MEMORY
    (overview if which == "timeline" else window_sums).remove(cache)
    start = time.perf_counter()
    with Reader(cache) as reader:
        reader.timeline() if which == "timeline" else reader.window_sums()
    return time.perf_counter() - start


def small_run(folder: Path) -> None:
    from popview.experiment import convert
    from popview.testing import synthetic

    synthetic.write(folder / "s.prv", synthetic.Shape(processes=2, threads=2, iterations=5, work_ns=1_000_000))
    cache, _ = convert(folder / "s.prv", folder / "c")
    for which in ("timeline", "sums"):
        for child in (False, True):
            print(f"first use of the {which} ({'child' if child else 'in memory'}): "
                  f"{first_use(cache, which, child):.2f} s")


def main() -> None:
    global IN_MEMORY
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache", type=Path, nargs="?", help="a converted cache (*.popview.h5)")
    parser.add_argument("which", nargs="?", choices=("timeline", "sums"), default="timeline")
    parser.add_argument("--child", action="store_true", help="build it in the child process")
    add_small(parser)
    args = parser.parse_args()
    from popview.cache import companion

    IN_MEMORY = companion.IN_MEMORY_BYTES
    if args.cache is None:
        in_scratch(parser, args.small, "a cache", small_run)
        return
    print(f"first use of the {args.which}: {first_use(args.cache, args.which, args.child):.2f} s")


IN_MEMORY = 0

if __name__ == "__main__":
    main()
